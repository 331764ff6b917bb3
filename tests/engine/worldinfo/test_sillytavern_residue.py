"""Issue 34: the World Info rules SillyTavern 1.18 showed on cases the harness did not cover.

Each expectation is what SillyTavern 1.18.0 sent for the fidelity case named in the test
(docs/fidelity.md), on a smaller book of the same kind.
"""

from __future__ import annotations

import json

from engine import assemble, parse_buckets
from engine.cards import Card, DepthPrompt
from engine.worldinfo import WorldInfoInput, compile_book, parse_lorebook
from tests.engine.factories import build_preset, make_node, marker
from tests.present import present

from .conftest import book, history, run, uids


def test_a_regex_key_with_a_caret_never_matches_at_the_start_of_a_message() -> None:
    # own-wi-scan-mark: every scanned message starts with U+0001
    lore = book(
        {"uid": 0, "key": ["/^Tell/"]},
        {"uid": 1, "key": ["/^A storm/m"]},
        {"uid": 2, "key": ["/\\nThen/"]},
        {"uid": 3, "key": ["/wick\\.$/"]},
        {"uid": 4, "key": ["/^\\x01Tell/"]},
    )
    messages = ("Then I will trim the wick.", "A storm is coming.", "Tell me about the lamp.")
    assert uids(run(lore, messages, settings={"include_names": False, "scan_depth": 3})) == [3, 4]


def test_one_recursion_pass_is_one_piece_so_a_multiline_caret_finds_its_later_entries_only() -> None:
    # own-wi-scan-mark: the pass's texts joined with newlines, U+0001 before the first only
    lore = book(
        {"uid": 0, "key": ["lamp"], "order": 90, "content": "Oil line one.\nSecond: the Beacon."},
        {"uid": 1, "key": ["lamp"], "order": 80, "content": "Kettle is warm."},
        {"uid": 2, "key": ["/^Second/m"], "order": 70},
        {"uid": 3, "key": ["/^Oil/m"], "order": 70},
        {"uid": 4, "key": ["/^Kettle/m"], "order": 70},
    )
    assert sorted(uids(run(lore, ("the lamp",)))) == [0, 1, 2, 4]


def test_match_flags_scan_the_persona_the_depth_prompt_and_the_creator_notes() -> None:
    # own-wi-match-flags
    lore = book(
        {"uid": 0, "key": ["Maelstrom"], "matchPersonaDescription": True},
        {"uid": 1, "key": ["Ironclad"], "matchCharacterDepthPrompt": True},
        {"uid": 2, "key": ["Ferrywoman"], "matchCreatorNotes": True},
        {"uid": 3, "key": ["Maelstrom", "Ironclad", "Ferrywoman"]},
        {"uid": 4, "key": ["Maelstrom"], "matchPersonaDescription": True, "scanDepth": 0},
    )
    texts = {
        "user_persona": "Ann fears the Maelstrom.",
        "depth_prompt": "Tess remembers the Ironclad.",
        "creator_notes": "The Ferrywoman appears later.",
    }
    result = run(lore, ("hello",), texts=texts, settings={"recursive": False})
    assert uids(result) == [0, 1, 2]  # a scan depth of 0 scans nothing, not even the flagged texts


def test_the_card_depth_prompt_and_creator_notes_reach_the_scan_through_assemble() -> None:
    card = Card(
        spec="chara_card_v2",
        name="Tess",
        creator_notes="The Ferrywoman appears later.",
        depth_prompt=DepthPrompt(prompt="Tess remembers the Ironclad.", depth=2, role="system"),
    )
    lore = book(
        {"uid": 0, "key": ["Ironclad"], "matchCharacterDepthPrompt": True, "content": "IRON"},
        {"uid": 1, "key": ["Ferrywoman"], "matchCreatorNotes": True, "content": "FERRY"},
    )
    doc = parse_buckets(
        {"names": {"user": "Ann", "char": "Tess"}, "history": [{"role": "user", "content": "hi"}]}
    )
    result = assemble(doc, card=card, world_info=WorldInfoInput(books=(lore,)), seed=1, count_tokens=False)
    assert [a["uid"] for a in present(result.world_info)["activated"]] == [0, 1]


def test_entries_are_read_in_javascript_key_order() -> None:
    # own-wi-large-unsorted: integer keys ascending, then the other keys as written
    raw = {
        "entries": {
            "10": {"uid": 10, "key": ["a"], "content": "ten"},
            "x": {"uid": 99, "key": ["a"], "content": "named"},
            "2": {"uid": 2, "key": ["a"], "content": "two"},
            "01": {"uid": 1, "key": ["a"], "content": "zero-one"},
        }
    }
    imported = parse_lorebook(json.dumps(raw).encode(), filename="book.json")
    assert [e.uid for e in imported.entries] == [2, 10, 99, 1]


def test_equal_orders_are_placed_by_key_order_not_file_order() -> None:
    raw = {"entries": {str(k): {"uid": k, "key": ["lamp"], "content": f"E{k}"} for k in (3, 1, 2)}}
    entries = parse_lorebook(json.dumps(raw).encode(), filename="book.json").entries
    lore = compile_book("Lore", entries)
    preset = build_preset(
        [make_node("main", content="MAIN"), marker("worldInfoBefore"), marker("chatHistory")]
    )
    doc = parse_buckets(
        {"names": {"user": "Ann", "char": "Tess"}, "history": [{"role": "user", "content": "lamp"}]}
    )
    result = assemble(
        doc, preset=preset, world_info=WorldInfoInput(books=(lore,)), seed=1, count_tokens=False
    )
    assert result.messages[1].content == "E3\nE2\nE1"  # ties: the last activated first


def test_an_entry_losing_in_its_first_of_two_groups_is_named_as_a_deliberate_difference() -> None:
    lore = book(
        {"uid": 0, "key": ["lamp"], "group": "a", "groupOverride": True, "order": 200, "content": "A"},
        {"uid": 1, "key": ["lamp"], "group": "a,b", "order": 100, "content": "AB"},
        {"uid": 2, "key": ["lamp"], "group": "b", "order": 50, "content": "B"},
    )
    result = run(lore, history("the lamp"))
    assert sorted(uids(result)) == [0, 2]
    assert any("uid 1" in note and "SillyTavern 1.18" in note for note in result.sillytavern_differences)
    preset = build_preset(
        [make_node("main", content="MAIN"), marker("worldInfoBefore"), marker("chatHistory")]
    )
    doc = parse_buckets(
        {"names": {"user": "Ann", "char": "Tess"}, "history": [{"role": "user", "content": "lamp"}]}
    )
    shown = assemble(doc, preset=preset, world_info=WorldInfoInput(books=(lore,)), seed=1, count_tokens=False)
    assert any("uid 1" in d for d in shown.differences)


def test_the_import_summary_names_entries_in_several_groups() -> None:
    raw = {"entries": {"0": {"uid": 0, "key": ["a"], "group": "x, y", "comment": "twice"}}}
    summary = parse_lorebook(json.dumps(raw).encode(), filename="book.json").summary
    assert any("several inclusion groups" in w and "twice" in w for w in summary.warnings)


def test_an_entry_with_both_decorators_activates() -> None:
    # SillyTavern 1.18 checks @@activate before @@dont_activate (world-info.js)
    lore = book({"uid": 0, "key": ["nothing"], "content": "@@activate\n@@dont_activate\nBoth."})
    assert uids(run(lore, ("the lamp",))) == [0]
