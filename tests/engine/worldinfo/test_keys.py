"""docs/worldinfo.md#what-is-scanned, docs/worldinfo.md#keys: what is scanned and how keys match."""

from __future__ import annotations

import pytest

from .conftest import book, run, uids


def test_a_plain_key_matches_case_insensitively_by_default() -> None:
    result = run(book({"key": ["Dragon"], "content": "Dragons breathe fire."}), ("I saw a DRAGON today",))
    assert uids(result) == [0]
    assert result.activated[0].reason == 'key "Dragon" in message 1'


def test_case_sensitive_entries_need_the_exact_case() -> None:
    lore = book({"key": ["Dragon"], "caseSensitive": True, "content": "x"})
    assert uids(run(lore, ("a dragon",))) == []
    assert uids(run(lore, ("a Dragon",))) == [0]


def test_whole_words_on_a_word_inside_another_word_does_not_match() -> None:
    lore = book({"key": ["cat"], "content": "Cats."})
    assert uids(run(lore, ("the category is wide",))) == []
    assert uids(run(lore, ("the cat, sleeping",))) == [0]


def test_whole_words_off_matches_inside_words() -> None:
    lore = book({"key": ["cat"], "matchWholeWords": False, "content": "Cats."})
    assert uids(run(lore, ("the category is wide",))) == [0]


def test_a_cjk_key_matches_inside_cjk_text_even_with_whole_words_on() -> None:
    lore = book({"key": ["魔法"], "content": "魔法の説明"})
    assert uids(run(lore, ("我们使用魔法了",))) == [0]


def test_a_key_with_spaces_matches_as_a_phrase() -> None:
    lore = book({"key": ["safe haven"], "content": "x"})
    assert uids(run(lore, ("we found a safe haven!",))) == [0]
    assert uids(run(lore, ("safe, not a haven",))) == []


def test_an_empty_key_never_matches() -> None:
    assert uids(run(book({"key": ["  "], "content": "x"}), ("anything",))) == []


def test_identity_macros_in_keys_are_the_request_names() -> None:
    lore = book({"key": ["{{char}}"], "content": "About her."})
    assert uids(run(lore, ("hello Mira",), names={"user": "Ann", "char": "Mira"})) == [0]
    assert uids(run(lore, ("hello Mira",), names={"user": "Ann", "char": "Zed"})) == []


def test_only_the_newest_scan_depth_messages_are_scanned() -> None:
    lore = book({"key": ["lantern"], "content": "x"})
    assert uids(run(lore, ("the lantern", "b", "c"))) == []  # default depth 2
    assert uids(run(lore, ("the lantern", "b", "c"), settings={"scan_depth": 3})) == [0]


def test_an_entrys_own_scan_depth_wins_and_zero_scans_nothing() -> None:
    lore = book({"key": ["lantern"], "scanDepth": 0, "content": "x"}, {"key": ["lantern"], "scanDepth": 5})
    assert uids(run(lore, ("the lantern", "b", "c"))) == [1]


def test_names_are_part_of_the_scan_text_when_include_names_is_on() -> None:
    lore = book({"key": ["Ann"], "content": "x"})
    assert uids(run(lore, ("hello",))) == [0]
    assert uids(run(lore, ("hello",), settings={"include_names": False})) == []


def test_a_match_flag_adds_the_persona_text_to_the_scan() -> None:
    lore = book({"key": ["sword"], "matchCharacterDescription": True, "content": "x"})
    result = run(lore, ("hello",), texts={"persona_prompt": "Mira carries a sword."})
    assert uids(result) == [0]
    assert result.activated[0].reason == 'key "sword" in persona text'


@pytest.mark.parametrize(
    ("logic", "message", "expected"),
    [
        (0, "the king and the queen", [0]),  # AND ANY: any secondary
        (0, "the king alone", []),
        (1, "the king and the queen", [0]),  # NOT ALL: at least one secondary missing
        (1, "the king, the queen and the crown", []),
        (2, "the king alone", [0]),  # NOT ANY: no secondary
        (2, "the king and the crown", []),
        (3, "the king, the queen and the crown", [0]),  # AND ALL: every secondary
        (3, "the king and the queen", []),
    ],
)
def test_each_selective_logic(logic: int, message: str, expected: list[int]) -> None:
    lore = book(
        {"key": ["king"], "keysecondary": ["queen", "crown"], "selectiveLogic": logic, "content": "x"}
    )
    assert uids(run(lore, (message,))) == expected


def test_secondary_keys_are_ignored_when_the_entry_is_not_selective() -> None:
    lore = book({"key": ["king"], "keysecondary": ["queen"], "selective": False, "content": "x"})
    assert uids(run(lore, ("the king alone",))) == [0]


def test_a_regex_key_uses_javascript_semantics_on_the_raw_text() -> None:
    lore = book({"key": [r"/(?<=sir\s+\w+)\s+the\s+bold/i"], "content": "x"})
    result = run(lore, ("Sir Robin the BOLD rides",))
    assert uids(result) == [0]
    assert result.activated[0].reason.startswith('key "/(?<=sir')


def test_a_regex_key_ignores_the_whole_word_setting() -> None:
    lore = book({"key": ["/cat/"], "content": "x"})
    assert uids(run(lore, ("the category",))) == [0]


def test_a_regex_key_that_does_not_compile_is_a_plain_key_and_reported_at_import() -> None:
    from engine.worldinfo import parse_lorebook

    lore = book({"key": ["/(unclosed/"], "content": "x"})
    assert uids(run(lore, ("see /(unclosed/ here",))) == [0]
    parsed = parse_lorebook(
        b'{"entries": {"0": {"key": ["/(unclosed/"], "comment": "Gate"}}}', filename="b.json"
    )
    assert parsed.summary.regex_keys == 1
    assert (
        "did not compile" in " ".join(parsed.summary.warnings)
        and "Gate" in parsed.summary.regex_keys_failed[0]
    )


def test_a_catastrophic_regex_key_is_stopped_and_reported_not_a_hang() -> None:
    lore = book({"key": ["/(a+)+$/"], "content": "x"}, {"key": ["tower"], "content": "y"})
    result = run(lore, ("a" * 40 + "b tower",))
    assert uids(result) == [1]
    assert any("time limit" in w for w in result.warnings)
