"""docs/worldinfo.md#import: an uploaded lorebook's bytes in, a ParsedLorebook out, or one sentence saying
what it is.

Accepted shapes, first match wins: a SillyTavern World Info file (`entries` keyed by uid, or a
list), a `lorebook_v3` document, a character card's `character_book` (bare, or inside the card).
Decoding, size, NUL and NaN rules are the preset importer's (docs/import.md#input-checks).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from engine.st_format import ImportRefused, preset_name_from_filename
from engine.st_format.decode import check_size, decode_upload, too_deep
from engine.st_format.shapes import detect_shape
from engine.st_format.wording import Findings, plural, short_list
from engine.tokens import count_text
from engine.worldinfo.fields import Report, normalise_entry
from engine.worldinfo.gc_pause import paused_gc
from engine.worldinfo.keys import compile_regex_key, parse_regex_key
from engine.worldinfo.model import (
    POSITIONS,
    SHARED_UID,
    Entry,
    LorebookRefused,
    LorebookSummary,
    ParsedLorebook,
)

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_ENTRIES = 10_000
UNNAMED = "Imported lorebook"

PRESET_NOT_LOREBOOK = "This is a SillyTavern preset, not a lorebook: import it on the Presets page instead."
CARD_WITHOUT_BOOK = (
    "This is a SillyTavern character card without a lorebook (no character_book), so there is nothing "
    "to import here."
)
NOT_A_LOREBOOK = "This is not a SillyTavern lorebook: expected an `entries` object or list."


def parse_lorebook(
    raw: bytes,
    *,
    filename: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_entries: int = DEFAULT_MAX_ENTRIES,
) -> ParsedLorebook:
    """The lorebook in an uploaded file (docs/worldinfo.md#import); raises LorebookRefused with one sentence
    if none."""
    try:
        with paused_gc():
            decoded = decode_upload(raw, max_bytes=max_bytes, what="lorebook")
            entries, warnings, source = _entries_of(decoded.data, max_entries=max_entries)
    except ImportRefused as refused:
        raise LorebookRefused(refused.message, status=refused.status) from None
    except RecursionError:
        raise LorebookRefused(too_deep("lorebook")) from None
    name = preset_name_from_filename(filename)
    if name == "Imported preset":
        name = UNNAMED
    return ParsedLorebook(
        name=name,
        entries=entries,
        summary=summarize(entries, warnings=(*decoded.warnings, *warnings), source=source),
        text=decoded.text.replace("\x00", ""),
    )


def check_lorebook_size(length: int, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    """Raise LorebookRefused (413) when a file of `length` bytes is over the limit (before reading it)."""
    try:
        check_size(length, max_bytes, what="lorebook")
    except ImportRefused as refused:
        raise LorebookRefused(refused.message, status=refused.status) from None


def entry_tokens(text: str) -> int:
    """The text's token count with the default encoding (the lorebook page's per-entry figure)."""
    return count_text(text) if text else 0


def convert_character_book(
    book: dict[str, Any], *, max_entries: int = DEFAULT_MAX_ENTRIES
) -> tuple[tuple[Entry, ...], LorebookSummary]:
    """A character card's `character_book` (V2/V3) as World Info entries and their import summary.

    Converted as SillyTavern converts it (docs/worldinfo.md#import, shape 2). Raises LorebookRefused when the
    book has no usable `entries` list.
    """
    if not isinstance(book, dict) or not isinstance(book.get("entries"), list):
        raise LorebookRefused("This character book has no `entries` list.")
    entries, warnings = _normalise(_v2_raw_entries(book["entries"]), max_entries=max_entries)
    return entries, summarize(entries, warnings=warnings, source="character_book")


def summarize(
    entries: tuple[Entry, ...], *, warnings: tuple[str, ...] | list[str], source: str
) -> LorebookSummary:
    """The import summary: counts, positions over all entries, regex keys and the warnings."""
    positions = Counter(str(e.position) for e in entries)
    regex_total = 0
    failed: list[str] = []
    for entry in entries:
        for key in (*entry.key, *entry.keysecondary):
            parsed = parse_regex_key(key.strip())
            if parsed is None:
                continue
            regex_total += 1
            _, problem = compile_regex_key(*parsed)
            if problem:
                failed.append(f"{key.strip()} in {entry.label} ({problem.rstrip('.')})")
    extra: list[str] = []
    if failed:
        extra.append(
            f"{plural(len(failed), 'regular-expression key')} did not compile and will match as plain text: "
            f"{short_list(failed)}."
        )
    several = [e.label for e in entries if len(e.groups) > 1]
    # item 11 of docs/fidelity.md#the-deliberate-differences, named where it applies
    if several:
        extra.append(
            "An entry in several inclusion groups that loses in one is not considered in the others; "
            "SillyTavern 1.18 removes it a second time and drops another candidate instead: "
            f"{short_list(several)}."
        )
    groups = sorted({label for e in entries for label in e.groups})
    return LorebookSummary(
        entries=len(entries),
        enabled=sum(1 for e in entries if e.enabled),
        constant=sum(1 for e in entries if e.constant),
        positions={str(p): positions[str(p)] for p in POSITIONS if positions[str(p)]},
        regex_keys=regex_total,
        regex_keys_failed=tuple(failed),
        timed=sum(1 for e in entries if e.has_timed_effect),
        groups=tuple(groups),
        warnings=(*warnings, *extra),
        source=source,
    )


def _entries_of(data: dict[str, Any], *, max_entries: int) -> tuple[tuple[Entry, ...], list[str], str]:
    """(entries, warnings, source shape) for the first matching shape, or LorebookRefused."""
    if data.get("spec") == "lorebook_v3" and isinstance(data.get("data"), dict):
        book = data["data"]
        if not isinstance(book.get("entries"), list):
            raise LorebookRefused("This lorebook_v3 document has no `data.entries` list.")
        entries, warnings = _normalise(_v2_raw_entries(book["entries"]), max_entries=max_entries)
        return entries, warnings, "lorebook_v3"
    raw_entries = data.get("entries")
    if isinstance(raw_entries, list) and raw_entries and all(_is_v2_entry(e) for e in raw_entries):
        entries, warnings = _normalise(_v2_raw_entries(raw_entries), max_entries=max_entries)
        return entries, warnings, "character_book"
    if isinstance(raw_entries, (dict, list)):
        entries, warnings = _normalise(_st_raw_entries(raw_entries), max_entries=max_entries)
        return entries, warnings, "world_info"
    card_book = _card_book(data)
    if card_book is not None:
        entries, warnings = _normalise(_v2_raw_entries(card_book["entries"]), max_entries=max_entries)
        return entries, ["Only the character card's lorebook was imported.", *warnings], "character_book"
    raise _refusal(data)


def _is_card(data: dict[str, Any]) -> bool:
    if data.get("spec") in ("chara_card_v2", "chara_card_v3"):
        return True
    inner = data.get("data")
    return (isinstance(inner, dict) and "first_mes" in inner) or "first_mes" in data


def _card_book(data: dict[str, Any]) -> dict[str, Any] | None:
    if not _is_card(data):
        return None
    for holder in (data.get("data"), data):
        if isinstance(holder, dict):
            book = holder.get("character_book")
            if isinstance(book, dict) and isinstance(book.get("entries"), list):
                return book
    return None


def _refusal(data: dict[str, Any]) -> LorebookRefused:
    if _is_card(data):
        return LorebookRefused(CARD_WITHOUT_BOOK)
    try:
        detect_shape(data)
    except ImportRefused as not_preset:
        if "instruct template" in not_preset.message:
            return LorebookRefused("This is a SillyTavern instruct template, not a lorebook.")
        if "sampler settings" in not_preset.message:
            return LorebookRefused("This file holds only sampler settings, not a lorebook.")
        return LorebookRefused(NOT_A_LOREBOOK)
    return LorebookRefused(PRESET_NOT_LOREBOOK)


def _is_v2_entry(entry: Any) -> bool:
    return isinstance(entry, dict) and "key" not in entry and ("keys" in entry or "insertion_order" in entry)


# --- shape 1: SillyTavern's own file -------------------------------------------------------------


def _st_raw_entries(raw_entries: dict[str, Any] | list[Any]) -> list[tuple[Any, Any]]:
    """(uid hint, raw entry) pairs: the entry's own `uid`, else its key in the object, else its index."""
    items = _js_key_order(raw_entries) if isinstance(raw_entries, dict) else enumerate(raw_entries)
    pairs = []
    for hint, raw in items:
        own = raw.get("uid") if isinstance(raw, dict) else None
        pairs.append((own if own is not None else hint, raw))
    return pairs


_ARRAY_INDEX_LIMIT = 2**32 - 1


def _is_array_index(key: str) -> bool:
    """True for a key JavaScript treats as an array index: a canonical decimal integer below 2³²−1."""
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < _ARRAY_INDEX_LIMIT


def _js_key_order(raw_entries: dict[str, Any]) -> list[tuple[str, Any]]:
    """The object's entries in the order SillyTavern enumerates them (JavaScript's key order): integer
    keys ascending, then the other keys as written (docs/worldinfo.md). Equal `order`s activate, and
    so are placed, in this order."""
    indexed = sorted((k for k in raw_entries if _is_array_index(k)), key=int)
    return [(k, raw_entries[k]) for k in indexed] + [
        (k, v) for k, v in raw_entries.items() if not _is_array_index(k)
    ]


# --- shape 2: character book (V2/V3) and lorebook_v3 ------------------------------------------------

# extensions.<snake_case> → SillyTavern's entry field
_V2_EXTENSIONS = {
    "position": "position",
    "exclude_recursion": "excludeRecursion",
    "prevent_recursion": "preventRecursion",
    "delay_until_recursion": "delayUntilRecursion",
    "probability": "probability",
    "useProbability": "useProbability",
    "depth": "depth",
    "selectiveLogic": "selectiveLogic",
    "outlet_name": "outletName",
    "group": "group",
    "group_override": "groupOverride",
    "group_weight": "groupWeight",
    "scan_depth": "scanDepth",
    "case_sensitive": "caseSensitive",
    "match_whole_words": "matchWholeWords",
    "use_group_scoring": "useGroupScoring",
    "role": "role",
    "sticky": "sticky",
    "cooldown": "cooldown",
    "delay": "delay",
    "match_persona_description": "matchPersonaDescription",
    "match_character_description": "matchCharacterDescription",
    "match_character_personality": "matchCharacterPersonality",
    "match_character_depth_prompt": "matchCharacterDepthPrompt",
    "match_scenario": "matchScenario",
    "match_creator_notes": "matchCreatorNotes",
    "triggers": "triggers",
    "ignore_budget": "ignoreBudget",
    "automation_id": "automationId",
    "vectorized": "vectorized",
    "display_index": "displayIndex",
}


def _v2_entry_as_st(entry: dict[str, Any]) -> dict[str, Any]:
    raw_ext = entry.get("extensions")
    ext: dict[str, Any] = raw_ext if isinstance(raw_ext, dict) else {}
    st: dict[str, Any] = {
        "key": entry.get("keys"),
        "keysecondary": entry.get("secondary_keys"),
        "comment": entry.get("comment") or entry.get("name") or "",
        "content": entry.get("content"),
        "constant": entry.get("constant") or False,
        "selective": entry.get("selective") or False,
        "order": entry.get("insertion_order"),
        "disable": entry.get("enabled") is False,
        "position": 0 if entry.get("position") == "before_char" else 1,
    }
    for snake, camel in _V2_EXTENSIONS.items():
        if ext.get(snake) is not None:
            st[camel] = ext[snake]
    if isinstance(ext.get("characterFilter"), dict):
        st["characterFilter"] = ext["characterFilter"]
    if entry.get("case_sensitive") is not None and "caseSensitive" not in st:
        st["caseSensitive"] = entry["case_sensitive"]
    return st


def _v2_raw_entries(raw_entries: list[Any]) -> list[tuple[Any, Any]]:
    pairs: list[tuple[Any, Any]] = []
    for index, entry in enumerate(raw_entries):
        if not isinstance(entry, dict):
            pairs.append((index, entry))
            continue
        hint = entry.get("id") if entry.get("id") is not None else index
        pairs.append((hint, _v2_entry_as_st(entry)))
    return pairs


def _reporter(findings: Findings, label: str) -> Report:
    """Notes each field of the entry `label` whose bad value was replaced by its default."""
    return lambda name: findings.add(f"Bad `{name}` value, default used", label)


# --- common: uids, normalisation, limits ------------------------------------------------------------


def _normalise(pairs: list[tuple[Any, Any]], *, max_entries: int) -> tuple[tuple[Entry, ...], list[str]]:
    if len(pairs) > max_entries:
        raise LorebookRefused(
            f"This lorebook has {len(pairs)} entries, over the limit of {max_entries} entries per lorebook."
        )
    findings = Findings()
    skipped = 0
    used: set[int] = set()
    wanted: list[tuple[int | None, int | None, dict[str, Any]]] = []  # (uid, the uid it shares, raw)
    for hint, raw in pairs:
        if not isinstance(raw, dict):
            skipped += 1
            continue
        uid = _uid(hint)
        repeated = uid is not None and uid in used
        wanted.append((None if repeated else uid, uid if repeated else None, raw))
        if uid is not None:
            used.add(uid)
    renumbered = 0
    next_uid = max(used, default=-1) + 1
    entries: list[Entry] = []
    for uid, shared, raw in wanted:
        if uid is None:
            uid, next_uid, renumbered = next_uid, next_uid + 1, renumbered + 1
        label = _label(raw, uid)
        entry = normalise_entry(raw, uid, _reporter(findings, label))
        if shared is not None:  # SillyTavern still knows it by the uid it shares (docs/worldinfo.md)
            entry.extra[SHARED_UID] = shared
        entries.append(entry)
    warnings = findings.sentences()
    if skipped:
        verb = "is" if skipped == 1 else "are"
        warnings.append(f"{plural(skipped, 'entry', 'entries')} that {verb} not an object skipped.")
    if renumbered:
        warnings.append(
            f"{plural(renumbered, 'entry', 'entries')} without a usable or unique uid got a new one."
        )
    if not entries:
        warnings.append("This lorebook has no entries.")
    return tuple(entries), warnings


def _uid(hint: Any) -> int | None:
    if isinstance(hint, bool):
        return None
    if isinstance(hint, int) and 0 <= hint < 2**31:
        return hint
    if isinstance(hint, str) and hint.strip().isdigit() and int(hint.strip()) < 2**31:
        return int(hint.strip())
    return None


def _label(raw: dict[str, Any], uid: int) -> str:
    comment = raw.get("comment")
    if isinstance(comment, str) and comment.strip():
        return comment.strip()[:60]
    return f"uid {uid}"


def export_world_info(entries: tuple[Entry, ...] | list[Entry]) -> str:
    """A SillyTavern World Info file holding `entries` (SillyTavern imports it back unchanged)."""
    doc = {
        "entries": {
            str(e.uid): {**e.to_st(), "displayIndex": e.extra.get("displayIndex", i)}
            for i, e in enumerate(entries)
        }
    }
    return json.dumps(doc, ensure_ascii=False, indent=4)
