"""Field normalisation for one prompt (docs/import.md#prompt-manager-presets): never reject a preset for one
bad optional field."""

from __future__ import annotations

import re
from typing import Any

from engine.vocabulary import ROLES

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
DEFAULT_POSITION = 0
DEFAULT_DEPTH = 4
DEFAULT_ORDER = 100

_WHOLE = re.compile(r"[+-]?\d+")
_MISSING = object()


def whole_number(value: Any) -> int | None:
    """The value as an int clamped to the 32-bit signed range, or None when it is not a whole number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        number = int(value.strip())
    else:
        return None
    return max(INT32_MIN, min(INT32_MAX, number))


def int_field(prompt: dict[str, Any], key: str, default: int) -> tuple[int, bool]:
    """(value, ok): a missing or null field is the default and ok; a bad one is the default and not ok."""
    raw = prompt.get(key)
    if raw is None:
        return default, True
    number = whole_number(raw)
    return (default, False) if number is None else (number, True)


def position_field(prompt: dict[str, Any]) -> tuple[int, bool]:
    """(injection_position, ok): 0 (relative) or 1 (depth); anything else is 0 and not ok."""
    number, ok = int_field(prompt, "injection_position", DEFAULT_POSITION)
    if number not in (0, 1):
        return DEFAULT_POSITION, False
    return number, ok


def role_field(value: Any) -> tuple[str, bool]:
    """(role, ok): one of system/user/assistant; missing, empty or unknown is system and not ok."""
    if isinstance(value, str) and value.strip().lower() in ROLES:
        return value.strip().lower(), True
    return "system", False


def flag(value: Any) -> bool:
    """True only for JSON true (or the string "true"); SillyTavern writes real booleans."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def enabled_flag(value: Any) -> bool:
    """SillyTavern's `enabled != false`: only an explicit false switches a node off."""
    if value is False:
        return False
    if isinstance(value, str) and value.strip().lower() == "false":
        return False
    return not (isinstance(value, int) and not isinstance(value, bool) and value == 0)


def text_field(value: Any) -> tuple[str, bool]:
    """(text, ok): a string as is; null is empty and ok; numbers become text; anything else is empty, not ok."""
    if isinstance(value, str):
        return value, True
    if value is None:
        return "", True
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value), True
    return "", False


def trigger_field(value: Any) -> tuple[tuple[str, ...], bool]:
    """(generation types, ok): a list of strings; anything else is empty and not ok."""
    if value is None:
        return (), True
    if isinstance(value, str):
        return ((value.strip(),) if value.strip() else ()), True
    if not isinstance(value, list):
        return (), False
    kept = tuple(item.strip() for item in value if isinstance(item, str) and item.strip())
    return kept, len(kept) == len(value)
