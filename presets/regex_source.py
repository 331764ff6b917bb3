"""The part of a preset file its regex scripts come from, kept beside the stored text at import so a
cache fill reads a few kilobytes instead of parsing the whole (up to 2 MiB) file again."""

from __future__ import annotations

import json
from typing import Any

# Where SillyTavern keeps the reasoning delimiters the scripts use (engine.regex.scripts_of_preset).
_REASONING_KEYS = ("reasoning", "reasoning_prefix", "reasoning_suffix")


def regex_source(data: Any) -> dict[str, Any]:
    """`extensions.regex_scripts` and the reasoning delimiters of a parsed preset file, as the
    engine's `scripts_of_preset` reads them ({} when the file has neither)."""
    if not isinstance(data, dict):
        return {}
    kept: dict[str, Any] = {key: data[key] for key in _REASONING_KEYS if key in data}
    extensions = data.get("extensions")
    if isinstance(extensions, dict) and "regex_scripts" in extensions:
        kept["extensions"] = {"regex_scripts": extensions["regex_scripts"]}
    return kept


def regex_source_of_text(text: str) -> dict[str, Any]:
    """The same, from a preset's stored text (once, at import or for a row stored before)."""
    if "regex_scripts" not in text and "reasoning" not in text:
        return {}  # most presets carry neither: no need to parse the whole file again
    try:
        return regex_source(json.loads(text or "null"))
    except (ValueError, RecursionError):
        return {}
