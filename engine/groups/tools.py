"""The group tools (docs/groups.md, "Agents that talk to each other" and "A shared workspace") as each
provider declares a tool: with `group_tools: true` in the bucket document the provider body lets the
speaker list the group's members, make one of them answer next, keep a private note for one of them,
write the channel's Author's Note, keep a private context for one member, recall earlier messages
and roll dice. The bot carries the calls out through the group API
and the channel tool route; the shapes follow `engine/memory_tool.py`.
"""

from __future__ import annotations

from typing import Any

NOTE_MAX_CHARS = 1_500
TRIGGER_MAX_CHARS = 2_000
AUTHORS_NOTE_MAX_CHARS = 1_500
DICE_FORMULA_MAX_CHARS = 100
AGENT_CONTEXT_MAX_CHARS = 1_500
RECALL_QUERY_MAX_CHARS = 200
LIST_MEMBERS, TRIGGER_MEMBER, SET_NOTE = "list_group_members", "trigger_group_member", "set_member_note"
SET_AUTHORS_NOTE, ROLL_DICE = "set_author_note", "roll_dice"
ADD_CONTEXT, RECALL = "add_agent_context", "recall"
TOOL_NAMES = (LIST_MEMBERS, TRIGGER_MEMBER, SET_NOTE, SET_AUTHORS_NOTE, ADD_CONTEXT, RECALL, ROLL_DICE)

_MEMBER_ID = {"type": "integer", "description": "The member's id, as list_group_members gives it."}

_TOOLS: tuple[tuple[str, str, dict[str, Any] | None], ...] = (
    (
        LIST_MEMBERS,
        "List the members of this group chat: each member's id, name, and whether it is muted "
        "(a muted member speaks only when asked to).",
        None,
    ),
    (
        TRIGGER_MEMBER,
        "Ask another member of the group to answer next. The message is shown to the members, not "
        "to the users of the channel.",
        {
            "type": "object",
            "properties": {
                "id": _MEMBER_ID,
                "message": {
                    "type": "string",
                    "description": f"What you say to that member, at most {TRIGGER_MAX_CHARS} characters.",
                    "maxLength": TRIGGER_MAX_CHARS,
                },
            },
            "required": ["id", "message"],
        },
    ),
    (
        SET_NOTE,
        "Keep a private note for one member in this channel; it becomes that member's scenario when it "
        "speaks here. An empty text removes the note.",
        {
            "type": "object",
            "properties": {
                "id": _MEMBER_ID,
                "text": {
                    "type": "string",
                    "description": f"The note, at most {NOTE_MAX_CHARS} characters.",
                    "maxLength": NOTE_MAX_CHARS,
                },
            },
            "required": ["id", "text"],
        },
    ),
    (
        SET_AUTHORS_NOTE,
        "Write this channel's Author's Note: a short text every member's prompt receives near the end "
        "of the chat, to steer the scene. It replaces the note there was; an empty text removes it.",
        {
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "description": f"The note, at most {AUTHORS_NOTE_MAX_CHARS} characters.",
                    "maxLength": AUTHORS_NOTE_MAX_CHARS,
                },
            },
            "required": ["text"],
        },
    ),
    (
        ADD_CONTEXT,
        "Keep a private context for one member: a message in this channel's history that only that "
        "member's prompts receive, at the place it was added. The other members and the channel's "
        "users never see it.",
        {
            "type": "object",
            "properties": {
                "member": _MEMBER_ID,
                "text": {
                    "type": "string",
                    "description": f"The context, at most {AGENT_CONTEXT_MAX_CHARS} characters.",
                    "maxLength": AGENT_CONTEXT_MAX_CHARS,
                },
            },
            "required": ["member", "text"],
        },
    ),
    (
        RECALL,
        "Look up earlier messages of this channel: the server answers the (at most 5) stored messages "
        "sharing the most words with the query, best first, each cut to 500 characters.",
        {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": f"The words to look for, at most {RECALL_QUERY_MAX_CHARS} characters.",
                    "maxLength": RECALL_QUERY_MAX_CHARS,
                },
            },
            "required": ["query"],
        },
    ),
    (
        ROLL_DICE,
        "Roll dice. The server rolls them and answers each die and the total; never invent a result.",
        {
            "type": "object",
            "properties": {
                "formula": {
                    "type": "string",
                    "description": "Dice notation: 2d6, d20, 3d8+2, 1d10-1, or a number N for one die of N sides.",
                    "maxLength": DICE_FORMULA_MAX_CHARS,
                },
            },
            "required": ["formula"],
        },
    ),
)

_NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}


def group_tools(provider: str) -> list[dict[str, Any]]:
    """The group tools in this provider's `tools` shape (Gemini: one entry of declarations)."""
    if provider == "openai":
        return [
            {
                "type": "function",
                "function": {"name": name, "description": text, "parameters": schema or _NO_ARGUMENTS},
            }
            for name, text, schema in _TOOLS
        ]
    if provider == "anthropic":
        return [
            {"name": name, "description": text, "input_schema": schema or _NO_ARGUMENTS}
            for name, text, schema in _TOOLS
        ]
    if provider == "gemini":
        # Gemini refuses an object schema without properties: a tool without arguments has none.
        declarations = [
            {"name": name, "description": text, **({"parameters": schema} if schema else {})}
            for name, text, schema in _TOOLS
        ]
        return [{"functionDeclarations": declarations}]
    raise ValueError(f"Unknown provider {provider!r}: use openai, anthropic or gemini.")


def with_group_tools(provider: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A copy of the provider body with the group tools declared after the tools it already has
    (Gemini's declarations join the body's one declarations entry)."""
    tools = [dict(tool) for tool in payload.get("tools", [])]
    added = group_tools(provider)
    if provider == "gemini" and tools and "functionDeclarations" in tools[0]:
        tools[0]["functionDeclarations"] = [
            *tools[0]["functionDeclarations"],
            *added[0]["functionDeclarations"],
        ]
    else:
        tools.extend(added)
    return {**payload, "tools": tools}
