"""docs/worldinfo.md#import: lorebooks import in each accepted shape, with defaults, normalisation and
refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.st_format import ImportRefused, parse_preset
from engine.worldinfo import LorebookRefused, convert_character_book, export_world_info, parse_lorebook
from tests.corpus import CORPUS
from tests.engine.st_format.conftest import is_one_sentence

WORLD_INFO_FILES = sorted((CORPUS / "worldinfo").glob("*.json"))
PRESET_FILES = sorted((CORPUS / "pm").glob("*.json")) + sorted((CORPUS / "legacy").glob("*.json"))
CARD_FILES = sorted((CORPUS / "cards").glob("*.json"))
corpus_only = pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpus is not on this machine")


def _parse(doc: Any, filename: str = "book.json"):
    return parse_lorebook(json.dumps(doc).encode(), filename=filename)


def _refusal(doc: Any) -> str:
    with pytest.raises(LorebookRefused) as refused:
        _parse(doc)
    assert is_one_sentence(refused.value.message), refused.value.message
    return refused.value.message


@corpus_only
@pytest.mark.parametrize("path", WORLD_INFO_FILES, ids=[p.name for p in WORLD_INFO_FILES])
def test_every_corpus_lorebook_imports_with_its_entry_count_and_positions(path: Path) -> None:
    original = json.loads(path.read_text(encoding="utf-8"))["entries"]
    raw_entries = list(original.values()) if isinstance(original, dict) else original
    expected_positions: dict[str, int] = {}
    for raw in raw_entries:
        expected_positions[str(raw.get("position", 0))] = (
            expected_positions.get(str(raw.get("position", 0)), 0) + 1
        )
    book = parse_lorebook(path.read_bytes(), filename=path.name)
    assert book.summary.entries == len(raw_entries)
    assert book.summary.positions == expected_positions
    assert book.summary.enabled == sum(1 for raw in raw_entries if not raw.get("disable"))
    assert book.summary.constant == sum(1 for raw in raw_entries if raw.get("constant"))
    assert book.name == path.name.removesuffix(".json")


@corpus_only
@pytest.mark.parametrize("path", PRESET_FILES[:12], ids=[p.name for p in PRESET_FILES[:12]])
def test_a_corpus_preset_is_refused_by_the_lorebook_importer_saying_what_it_is(path: Path) -> None:
    try:
        parse_preset(path.read_bytes(), filename=path.name)
    except ImportRefused:
        pytest.skip("not an importable preset either")
    with pytest.raises(LorebookRefused) as refused:
        parse_lorebook(path.read_bytes(), filename=path.name)
    assert (
        refused.value.message
        == "This is a SillyTavern preset, not a lorebook: import it on the Presets page instead."
    )


@corpus_only
@pytest.mark.parametrize("path", CARD_FILES, ids=[p.name for p in CARD_FILES])
def test_a_corpus_card_without_a_book_is_refused_as_a_card(path: Path) -> None:
    with pytest.raises(LorebookRefused) as refused:
        parse_lorebook(path.read_bytes(), filename=path.name)
    assert "character card" in refused.value.message
    assert is_one_sentence(refused.value.message)


def test_a_lorebook_given_to_the_preset_importer_points_to_the_lorebook_page() -> None:
    with pytest.raises(ImportRefused) as refused:
        parse_preset(json.dumps({"entries": {"0": {"key": ["a"]}}}).encode(), filename="lore.json")
    assert "lorebook" in refused.value.message
    assert "Lorebooks page" in refused.value.message


def test_missing_fields_take_sillytaverns_defaults() -> None:
    entry = _parse({"entries": {"3": {"content": "Lore."}}}).entries[0]
    assert entry.uid == 3
    assert (entry.key, entry.keysecondary) == ((), ())
    assert entry.selective is True and entry.selective_logic == 0
    assert entry.constant is False and entry.disable is False
    assert (entry.order, entry.position, entry.depth, entry.role) == (100, 0, 4, 0)
    assert entry.probability == 100 and entry.use_probability is True
    assert (entry.group, entry.group_override, entry.group_weight) == ("", False, 100)
    assert entry.use_group_scoring is None and entry.scan_depth is None
    assert entry.case_sensitive is None and entry.match_whole_words is None
    assert entry.delay_until_recursion == 0
    assert (entry.sticky, entry.cooldown, entry.delay) == (None, None, None)
    assert entry.ignore_budget is False and entry.triggers == () and entry.outlet_name == ""


def test_entries_may_be_a_list_and_uids_come_from_the_entry_or_its_index() -> None:
    book = _parse({"entries": [{"content": "a"}, {"uid": 7, "content": "b"}]})
    assert [e.uid for e in book.entries] == [0, 7]


def test_bad_field_values_fall_back_to_defaults_with_a_warning_naming_the_entry() -> None:
    book = _parse(
        {
            "entries": {
                "0": {"comment": "Harbor", "order": "12", "depth": "deep", "position": 9, "probability": 250},
                "1": {
                    "comment": "Tower",
                    "key": "tower, spire",
                    "selectiveLogic": 7,
                    "delayUntilRecursion": True,
                },
            }
        }
    )
    harbor, tower = book.entries
    assert harbor.order == 12  # a whole-number string is accepted
    assert harbor.depth == 4 and harbor.position == 0 and harbor.probability == 100
    assert tower.key == ("tower", "spire") and tower.selective_logic == 0 and tower.delay_until_recursion == 1
    text = " ".join(book.summary.warnings)
    assert "`depth`" in text and "Harbor" in text and "`selectiveLogic`" in text and "Tower" in text


def test_numbers_are_clamped_to_32_bits() -> None:
    assert _parse({"entries": {"0": {"order": 10**12}}}).entries[0].order == 2**31 - 1


def test_unknown_fields_are_kept_and_exported() -> None:
    book = _parse({"entries": {"0": {"content": "x", "vectorized": True, "automationId": "abc"}}})
    exported = json.loads(export_world_info(book.entries))["entries"]["0"]
    assert exported["vectorized"] is True and exported["automationId"] == "abc"


def test_a_lorebook_v3_document_is_converted_as_sillytavern_does() -> None:
    doc = {
        "spec": "lorebook_v3",
        "data": {
            "entries": [
                {
                    "keys": ["moon"],
                    "secondary_keys": ["tide"],
                    "content": "The moon pulls.",
                    "insertion_order": 5,
                    "enabled": False,
                    "position": "before_char",
                    "extensions": {"scan_depth": 3, "group_weight": 40, "sticky": 2, "outlet_name": "sky"},
                },
                {
                    "keys": ["sun"],
                    "content": "Warm.",
                    "position": "after_char",
                    "extensions": {"position": 4},
                },
                {"keys": ["star"], "content": "Far.", "position": "after_char"},
            ]
        },
    }
    book = _parse(doc)
    moon, sun, star = book.entries
    assert moon.key == ("moon",) and moon.keysecondary == ("tide",)
    assert moon.order == 5 and moon.disable is True and moon.position == 0
    assert moon.scan_depth == 3 and moon.group_weight == 40 and moon.sticky == 2 and moon.outlet_name == "sky"
    assert moon.constant is False and moon.selective is False
    assert sun.position == 4 and star.position == 1
    assert book.summary.source == "lorebook_v3"


def test_convert_character_book_gives_entries_and_a_summary() -> None:
    entries, summary = convert_character_book(
        {"entries": [{"keys": ["a"], "content": "A", "insertion_order": 1, "enabled": True}]}
    )
    assert len(entries) == 1 and entries[0].key == ("a",) and summary.entries == 1


def test_a_card_with_a_book_imports_its_book_and_says_so() -> None:
    card = {
        "spec": "chara_card_v2",
        "data": {
            "name": "Mira",
            "first_mes": "Hi",
            "character_book": {"entries": [{"keys": ["x"], "content": "X"}]},
        },
    }
    book = _parse(card)
    assert len(book.entries) == 1
    assert any("character card's lorebook" in w for w in book.summary.warnings)


def test_a_card_without_a_book_is_refused_saying_it_is_a_card() -> None:
    assert "character card" in _refusal({"spec": "chara_card_v3", "data": {"name": "M", "first_mes": "Hi"}})


def test_a_preset_is_refused_saying_it_is_a_preset() -> None:
    assert "preset" in _refusal({"prompts": [{"identifier": "main", "content": "x"}]})


def test_anything_else_is_refused_saying_a_lorebook_was_expected() -> None:
    assert "`entries`" in _refusal({"hello": "world"})


def test_a_file_over_five_mebibytes_is_refused_before_parsing() -> None:
    raw = b'{"entries": {"0": {"content": "' + b"x" * (5 * 1024 * 1024) + b'"}}}'
    with pytest.raises(LorebookRefused) as refused:
        parse_lorebook(raw, filename="big.json")
    assert refused.value.status == 413
    assert "limit for a lorebook" in refused.value.message


def test_a_hundred_thousand_entry_file_is_refused_with_one_sentence() -> None:
    raw = json.dumps({"entries": [{"content": ""} for _ in range(100_000)]}).encode()
    with pytest.raises(LorebookRefused) as refused:
        parse_lorebook(raw, filename="huge.json")
    assert "100000 entries" in refused.value.message and is_one_sentence(refused.value.message)


def test_nan_is_refused_and_nul_characters_are_removed_with_a_warning() -> None:
    with pytest.raises(LorebookRefused):
        parse_lorebook(b'{"entries": {"0": {"order": NaN}}}', filename="nan.json")
    book = parse_lorebook(b'{"entries": {"0": {"content": "a\\u0000b"}}}', filename="nul.json")
    assert book.entries[0].content == "ab"
    assert any("NUL" in w for w in book.summary.warnings)


def test_entries_with_wrong_types_are_skipped_or_defaulted_never_refused() -> None:
    book = _parse({"entries": {"0": "not an entry", "1": {"key": [1, None, "ok"], "content": ["no"]}}})
    assert len(book.entries) == 1
    assert book.entries[0].key == ("1", "ok") and book.entries[0].content == ""
    assert any("not an object" in w for w in book.summary.warnings)


def test_duplicate_uids_are_renumbered_with_a_warning() -> None:
    book = _parse({"entries": [{"uid": 1, "content": "a"}, {"uid": 1, "content": "b"}]})
    assert sorted(e.uid for e in book.entries) == [1, 2]
    assert any("new one" in w for w in book.summary.warnings)


def test_export_then_reimport_gives_the_same_entries() -> None:
    book = _parse(
        {
            "entries": {
                "4": {
                    "key": ["a", "/b+/i"],
                    "content": "A",
                    "sticky": 3,
                    "group": "g1,g2",
                    "triggers": ["swipe"],
                },
                "9": {
                    "key": ["c"],
                    "position": 7,
                    "outletName": "side",
                    "characterFilter": {"names": ["Mira"]},
                },
            }
        }
    )
    again = parse_lorebook(export_world_info(book.entries).encode(), filename="again.json")
    assert again.entries == book.entries


@corpus_only
def test_eldoria_exported_by_us_keeps_every_field_sillytavern_reads() -> None:
    path = CORPUS / "worldinfo" / "st-Eldoria-newer.json"
    original = json.loads(path.read_text(encoding="utf-8"))["entries"]
    book = parse_lorebook(path.read_bytes(), filename=path.name)
    exported = json.loads(export_world_info(book.entries))["entries"]
    assert set(exported) == set(original)
    for uid, raw in original.items():
        for field, value in raw.items():
            assert exported[uid][field] == value, (uid, field)
