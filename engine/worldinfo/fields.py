"""Normalising one World Info entry (docs/worldinfo.md#import): a bad value falls back to its default, with a
warning.

The number rules are the preset importer's (docs/import.md#prompt-manager-presets): whole-number strings
accepted, clamped to 32 bits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.st_format.fields import whole_number
from engine.vocabulary import GENERATION_TYPES
from engine.worldinfo.model import CharacterFilter, Entry

# SillyTavern's entry fields that `Entry` reads; anything else is kept in `extra` for the export.
KNOWN_FIELDS = frozenset(
    {
        "uid",
        "key",
        "keysecondary",
        "comment",
        "content",
        "constant",
        "selective",
        "selectiveLogic",
        "disable",
        "order",
        "position",
        "depth",
        "role",
        "probability",
        "useProbability",
        "group",
        "groupOverride",
        "groupWeight",
        "useGroupScoring",
        "scanDepth",
        "caseSensitive",
        "matchWholeWords",
        "excludeRecursion",
        "preventRecursion",
        "delayUntilRecursion",
        "sticky",
        "cooldown",
        "delay",
        "ignoreBudget",
        "triggers",
        "outletName",
        "characterFilter",
        "matchPersonaDescription",
        "matchCharacterDescription",
        "matchCharacterPersonality",
        "matchCharacterDepthPrompt",
        "matchScenario",
        "matchCreatorNotes",
    }
)

Report = Callable[[str], None]  # called with the field name when a value was replaced by its default


def _bool(raw: dict[str, Any], name: str, default: bool, bad: Report) -> bool:
    value = raw.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    bad(name)
    return default


def _optional_bool(raw: dict[str, Any], name: str, bad: Report) -> bool | None:
    if raw.get(name) is None:
        return None
    return _bool(raw, name, False, bad)


def _int(raw: dict[str, Any], name: str, default: int, bad: Report, low: int | None = None) -> int:
    value = raw.get(name)
    if value is None:
        return default
    number = whole_number(value)
    if number is None or (low is not None and number < low):
        bad(name)
        return default
    return number


def _choice(raw: dict[str, Any], name: str, default: int, allowed: range, bad: Report) -> int:
    number = _int(raw, name, default, bad)
    if number not in allowed:
        bad(name)
        return default
    return number


def _optional_int(raw: dict[str, Any], name: str, bad: Report) -> int | None:
    """Null stays null (use the setting); a bad value is null too, with a warning."""
    value = raw.get(name)
    if value is None:
        return None
    number = whole_number(value)
    if number is None or number < 0:
        bad(name)
        return None
    return number


def _timed(raw: dict[str, Any], name: str, bad: Report) -> int | None:
    return _optional_int(raw, name, bad)  # 0 and null both mean "no effect", as in SillyTavern


def _text(raw: dict[str, Any], name: str, bad: Report) -> str:
    value = raw.get(name)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    bad(name)
    return ""


def _keys(raw: dict[str, Any], name: str, bad: Report) -> tuple[str, ...]:
    value = raw.get(name)
    if value is None:
        return ()
    if isinstance(value, str):  # SillyTavern's editor splits a typed key list on commas
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if not isinstance(value, list):
        bad(name)
        return ()
    keys: list[str] = []
    for item in value:
        if isinstance(item, str):
            keys.append(item)
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            keys.append(str(item))
        else:
            bad(name)
    return tuple(keys)


def _delay_until_recursion(raw: dict[str, Any], bad: Report) -> int:
    value = raw.get("delayUntilRecursion")
    if value is None or value is False:
        return 0
    if value is True:
        return 1
    return _int(raw, "delayUntilRecursion", 0, bad, low=0)


def _triggers(raw: dict[str, Any], bad: Report) -> tuple[str, ...]:
    value = raw.get("triggers")
    if value is None:
        return ()
    if not isinstance(value, list):
        bad("triggers")
        return ()
    kept = tuple(item.strip() for item in value if isinstance(item, str) and item.strip() in GENERATION_TYPES)
    if len(kept) != len(value):
        bad("triggers")
    return kept


def _character_filter(raw: dict[str, Any], bad: Report) -> CharacterFilter:
    value = raw.get("characterFilter")
    if value is None:
        return CharacterFilter()
    if not isinstance(value, dict):
        bad("characterFilter")
        return CharacterFilter()
    names = value.get("names") or []
    tags = value.get("tags") or []
    if not isinstance(names, list) or not isinstance(tags, list):
        bad("characterFilter")
        return CharacterFilter()
    return CharacterFilter(
        names=tuple(n for n in names if isinstance(n, str) and n.strip()),
        tags=tuple(str(t) for t in tags if isinstance(t, (str, int)) and not isinstance(t, bool)),
        is_exclude=value.get("isExclude") is True,
    )


def normalise_entry(raw: dict[str, Any], uid: int, bad: Report) -> Entry:
    """The entry `raw` (SillyTavern's field names) with defaults filled in and bad values replaced."""
    probability = _int(raw, "probability", 100, bad)
    if not 0 <= probability <= 100:
        bad("probability")
        probability = max(0, min(100, probability))
    return Entry(
        uid=uid,
        key=_keys(raw, "key", bad),
        keysecondary=_keys(raw, "keysecondary", bad),
        comment=_text(raw, "comment", bad),
        content=_text(raw, "content", bad),
        constant=_bool(raw, "constant", False, bad),
        selective=_bool(raw, "selective", True, bad),
        selective_logic=_choice(raw, "selectiveLogic", 0, range(4), bad),
        disable=_bool(raw, "disable", False, bad),
        order=_int(raw, "order", 100, bad),
        position=_choice(raw, "position", 0, range(8), bad),
        depth=_int(raw, "depth", 4, bad, low=0),
        role=None if "role" in raw and raw["role"] is None else _choice(raw, "role", 0, range(3), bad),
        probability=probability,
        use_probability=_bool(raw, "useProbability", True, bad),
        group=_text(raw, "group", bad),
        group_override=_bool(raw, "groupOverride", False, bad),
        group_weight=_int(raw, "groupWeight", 100, bad, low=0),
        use_group_scoring=_optional_bool(raw, "useGroupScoring", bad),
        scan_depth=_optional_int(raw, "scanDepth", bad),
        case_sensitive=_optional_bool(raw, "caseSensitive", bad),
        match_whole_words=_optional_bool(raw, "matchWholeWords", bad),
        exclude_recursion=_bool(raw, "excludeRecursion", False, bad),
        prevent_recursion=_bool(raw, "preventRecursion", False, bad),
        delay_until_recursion=_delay_until_recursion(raw, bad),
        sticky=_timed(raw, "sticky", bad),
        cooldown=_timed(raw, "cooldown", bad),
        delay=_timed(raw, "delay", bad),
        ignore_budget=_bool(raw, "ignoreBudget", False, bad),
        triggers=_triggers(raw, bad),
        outlet_name=_text(raw, "outletName", bad).strip(),
        character_filter=_character_filter(raw, bad),
        match_persona_description=_bool(raw, "matchPersonaDescription", False, bad),
        match_character_description=_bool(raw, "matchCharacterDescription", False, bad),
        match_character_personality=_bool(raw, "matchCharacterPersonality", False, bad),
        match_character_depth_prompt=_bool(raw, "matchCharacterDepthPrompt", False, bad),
        match_scenario=_bool(raw, "matchScenario", False, bad),
        match_creator_notes=_bool(raw, "matchCreatorNotes", False, bad),
        extra={k: v for k, v in raw.items() if k not in KNOWN_FIELDS},
    )


def entry_from_st(raw: dict[str, Any], uid: int) -> Entry:
    """An entry from SillyTavern's fields as stored (already normalised once, so nothing is reported)."""
    return normalise_entry(raw, uid, lambda _name: None)
