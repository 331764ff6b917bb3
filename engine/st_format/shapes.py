"""docs/import.md#recognised-shapes: which of the recognised shapes a JSON object is, or one sentence saying
what it is instead."""

from __future__ import annotations

from typing import Any

from engine.st_format.legacy import story_string_of
from engine.st_format.model import ImportRefused
from engine.st_format.prompt_manager import PRE_PM_KEYS

NOT_A_PRESET = "This is not a SillyTavern preset: expected a `prompts` list or a story string."
LOREBOOK_NOT_PRESET = (
    "This is a SillyTavern World Info (lorebook) file, not a preset: import it on the Lorebooks page instead."
)


def lone_system_prompt(data: dict[str, Any]) -> str | None:
    """The text of a system-prompt preset or an old instruct template's system prompt, if the file is one."""
    content = data.get("content")
    if isinstance(content, str) and "name" in data:
        return content
    sysprompt = data.get("sysprompt")
    sysprompt_text = sysprompt.get("content") if isinstance(sysprompt, dict) else None
    if isinstance(sysprompt_text, str) and sysprompt_text.strip():
        return sysprompt_text
    for holder in (data, data.get("instruct")):
        if isinstance(holder, dict):
            text = holder.get("system_prompt")
            if isinstance(text, str) and text.strip():
                return text
    return None


def _is_card(data: dict[str, Any]) -> bool:
    if data.get("spec") in ("chara_card_v2", "chara_card_v3"):
        return True
    inner = data.get("data")
    return (isinstance(inner, dict) and "first_mes" in inner) or (
        "first_mes" in data and "prompts" not in data
    )


def _is_instruct_template(data: dict[str, Any]) -> bool:
    for holder in (data, data.get("instruct")):
        if isinstance(holder, dict) and ("input_sequence" in holder or "output_sequence" in holder):
            return True
    return False


def refusal_for(data: dict[str, Any]) -> ImportRefused:
    """The sentence for a JSON object that is none of the recognised shapes (docs/import.md#recognised-shapes,
    shape 5)."""
    if _is_card(data):
        return ImportRefused(
            "This is a SillyTavern character card, not a preset: import it on the Characters page."
        )
    if isinstance(data.get("entries"), (dict, list)):
        return ImportRefused(LOREBOOK_NOT_PRESET)
    if _is_instruct_template(data):
        return ImportRefused(
            "This is a SillyTavern instruct template without a system prompt, not a preset: it only holds "
            "chat-template sequences."
        )
    if "temp" in data or "temperature" in data:
        return ImportRefused(
            "This file holds only sampler settings (such as temperature) and no prompts, so it is not a preset."
        )
    return ImportRefused(NOT_A_PRESET)


def detect_shape(data: dict[str, Any]) -> str:
    """The first matching shape: prompt_manager, pre_prompt_manager, text_completion or system_prompt."""
    prompts = data.get("prompts")
    if isinstance(prompts, list) and prompts:
        return "prompt_manager"
    if any(key in data for key in PRE_PM_KEYS):
        return "pre_prompt_manager"
    if story_string_of(data) is not None:
        return "text_completion"
    if lone_system_prompt(data) is not None:
        return "system_prompt"
    raise refusal_for(data)
