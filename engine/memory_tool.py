"""The update_short_term_memory tool (docs/memory.md) as each provider declares a tool.

When the bot says its model has tools (`stm_context.has_tools`), the STM contributor asks the model
to call this tool; the provider body then carries the tool's definition so no bot has to write the
schema itself. The model's call carries one argument, `summary`, which the bot sends to
`POST /api/v1/servers/<id>/stm/summary` (which refuses more than SUMMARY_MAX_CHARS characters).
"""

from __future__ import annotations

from typing import Any

from .stm import SUMMARY_MAX_CHARS, TOOL_NAME

DESCRIPTION = (
    "Replace the short-term memory of this channel with a fresh summary of the conversation so far: "
    "who is here, what happened, what is still open. Write it in the third person, at most "
    f"{SUMMARY_MAX_CHARS} characters; it is shown to you in later turns."
)


def _parameters() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "summary": {
                "type": "string",
                "description": f"The channel's new summary, at most {SUMMARY_MAX_CHARS} characters.",
                "maxLength": SUMMARY_MAX_CHARS,
            }
        },
        "required": ["summary"],
    }


def memory_tools(provider: str) -> list[dict[str, Any]]:
    """The body's `tools` list for this provider, holding the memory tool in that provider's shape."""
    if provider == "openai":
        return [
            {
                "type": "function",
                "function": {"name": TOOL_NAME, "description": DESCRIPTION, "parameters": _parameters()},
            }
        ]
    if provider == "anthropic":
        return [{"name": TOOL_NAME, "description": DESCRIPTION, "input_schema": _parameters()}]
    if provider == "gemini":
        return [
            {
                "functionDeclarations": [
                    {"name": TOOL_NAME, "description": DESCRIPTION, "parameters": _parameters()}
                ]
            }
        ]
    raise ValueError(f"Unknown provider {provider!r}: use openai, anthropic or gemini.")
