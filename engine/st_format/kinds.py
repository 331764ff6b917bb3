"""What a node is: well-known identifiers, their display names, and comment detection
(docs/import.md#prompt-manager-presets)."""

from __future__ import annotations

import re

MARKER_IDENTIFIERS = frozenset(
    {
        "worldInfoBefore",
        "worldInfoAfter",
        "charDescription",
        "charPersonality",
        "scenario",
        "personaDescription",
        "dialogueExamples",
        "chatHistory",
    }
)
SYSTEM_SLOTS = frozenset({"main", "nsfw", "jailbreak", "enhanceDefinitions"})
KNOWN_IDENTIFIERS = MARKER_IDENTIFIERS | SYSTEM_SLOTS

# SillyTavern's own display names, used when we synthesise a node.
DEFAULT_NAMES = {
    "main": "Main Prompt",
    "nsfw": "Auxiliary Prompt",
    "jailbreak": "Post-History Instructions",
    "enhanceDefinitions": "Enhance Definitions",
    "worldInfoBefore": "World Info (before)",
    "worldInfoAfter": "World Info (after)",
    "charDescription": "Char Description",
    "charPersonality": "Char Personality",
    "scenario": "Scenario",
    "personaDescription": "Persona Description",
    "dialogueExamples": "Chat Examples",
    "chatHistory": "Chat History",
}

_TRIM = re.compile(r"\{\{\s*trim\s*\}\}", re.IGNORECASE)
_COMMENT_OPEN = re.compile(r"\{\{\s*//")


def _comment_end(text: str, start: int) -> int:
    """Index just past the `}}` closing the comment opened at `start`, or -1 if it never closes."""
    depth = 0
    i = start
    n = len(text)
    while i < n - 1:
        pair = text[i : i + 2]
        if pair == "{{":
            depth += 1
            i += 2
        elif pair == "}}":
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return -1


def is_comment_only(text: str) -> bool:
    """True when `text` is nothing but `{{// … }}` comments, `{{trim}}` and whitespace, with at least one."""
    i = 0
    n = len(text)
    seen = False
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        if text.startswith("{{", i):
            if _COMMENT_OPEN.match(text, i):
                end = _comment_end(text, i)
                if end < 0:
                    return False
                i = end
                seen = True
                continue
            trim = _TRIM.match(text, i)
            if trim:
                i = trim.end()
                seen = True
                continue
        return False
    return seen
