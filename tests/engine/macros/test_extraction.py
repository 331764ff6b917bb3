"""Extraction of write macros from a saved message (docs/conversations.md), through the engine's own
parser."""

from __future__ import annotations

import pytest

from engine.macros.extraction import extract_ops, random_seed
from engine.macros.replay import Op


def ops_of(extraction) -> list[tuple[str, str, str]]:
    return [(op.op, op.key, op.value) for op in extraction.ops]


def test_each_write_is_resolved_against_the_state_the_previous_writes_left():
    result = extract_ops("{{setvar::a::1}} {{setvar::b::{{getvar::a}}}}", variables={})
    assert ops_of(result) == [("setvar", "a", "1"), ("setvar", "b", "1")]
    assert result.variables == {"a": "1", "b": "1"}


def test_a_value_reads_the_state_the_earlier_messages_produced():
    result = extract_ops("{{setvar::greeting::hp is {{getvar::hp}}}}", variables={"hp": 40})
    assert ops_of(result) == [("setvar", "greeting", "hp is 40")]


def test_a_variable_reassigned_between_two_reads_gives_each_read_its_own_value():
    text = "{{setvar::x::1}}{{setvar::first::{{getvar::x}}}}{{setvar::x::2}}{{setvar::second::{{getvar::x}}}}"
    result = extract_ops(text, variables={})
    assert result.variables["first"] == "1"
    assert result.variables["second"] == "2"


def test_extracted_macros_are_removed_from_the_visible_text():
    result = extract_ops("The guard nods. {{setvar::mood::calm}} She waits.", variables={})
    assert result.text == "The guard nods. She waits."


def test_a_line_holding_only_write_macros_disappears_from_the_visible_text():
    result = extract_ops("First line.\n{{setvar::a::1}} {{incvar::turn}}\nLast line.", variables={})
    assert result.text == "First line.\nLast line."


def test_a_json_value_ending_in_three_braces_is_stored_whole():
    result = extract_ops('Roster updated.{{setvar::npcs::{"alice":{"hp":10}}}}', variables={})
    assert ops_of(result) == [("setvar", "npcs", '{"alice":{"hp":10}}')]
    assert result.text == "Roster updated."


def test_a_display_macro_nested_in_a_json_value_is_resolved_before_storing():
    result = extract_ops('{{setvar::npcs::{"alice":{"hp":{{getvar::base}}}}}}', variables={"base": "12"})
    assert result.variables["npcs"] == '{"alice":{"hp":12}}'


def test_a_write_macro_nested_inside_a_value_stays_literal_and_writes_nothing():
    result = extract_ops("{{setvar::note::{{setvar::other::1}}}}", variables={})
    assert result.variables == {"note": "{{setvar::other::1}}"}


def test_a_write_macro_nested_deeper_inside_a_display_macro_also_stays_literal():
    result = extract_ops("{{setvar::note::{{random::{{incvar::n}}}}}}", variables={})
    assert result.variables == {"note": "{{incvar::n}}"}


def test_an_escaped_write_macro_stays_in_the_text_without_its_backslash():
    result = extract_ops(r"Type \{{setvar::hp::1}} to cheat.", variables={})
    assert result.ops == ()
    assert result.text == "Type {{setvar::hp::1}} to cheat."


def test_macros_other_than_local_writes_stay_in_the_text_untouched():
    text = "{{getvar::hp}} {{setglobalvar::g::1}} {{// {{setvar::c::1}} }}"
    result = extract_ops(text, variables={"hp": 3})
    assert result.ops == ()
    assert result.text == text


def test_a_value_with_double_colons_keeps_them():
    result = extract_ops("{{setvar::motto::a::b::c}}", variables={})
    assert result.variables == {"motto": "a::b::c"}


def test_the_key_itself_may_be_computed_by_a_nested_macro():
    result = extract_ops("{{setvar::{{getvar::who}}_hp::9}}", variables={"who": "alice"})
    assert ops_of(result) == [("setvar", "alice_hp", "9")]


def test_identity_macros_in_a_value_stay_deferred_for_the_render_that_uses_them():
    result = extract_ops("{{setvar::last_speaker::{{user}}}}", variables={})
    assert result.variables == {"last_speaker": "{{user}}"}


def test_incvar_decvar_deletevar_and_addvar_are_recorded_in_order():
    text = "{{incvar::turn}}{{decvar::hp}}{{deletevar::gone}}{{addvar::gold::5}}"
    result = extract_ops(text, variables={"hp": "10", "gone": "x", "gold": "1"})
    assert ops_of(result) == [
        ("incvar", "turn", ""),
        ("decvar", "hp", ""),
        ("deletevar", "gone", ""),
        ("addvar", "gold", "5"),
    ]
    assert result.variables == {"turn": 1, "hp": 9, "gold": 6}


def test_random_values_are_the_same_for_the_same_message_swipe_and_position():
    text = "{{setvar::r::{{random::a::b::c::d::e::f::g::h}}}}"
    first = extract_ops(text, variables={}, random_key=(7, 1))
    again = extract_ops(text, variables={}, random_key=(7, 1))
    assert first.variables == again.variables


def test_random_values_are_drawn_with_the_seed_of_their_message_swipe_and_position():
    text = "{{setvar::r::{{random::" + "::".join(str(n) for n in range(1000)) + "}}}}"
    draws = {extract_ops(text, variables={}, random_key=(7, swipe)).variables["r"] for swipe in range(8)}
    assert len(draws) > 1
    assert random_seed(7, 1, 0) != random_seed(7, 1, 1) != random_seed(7, 2, 0)


def test_a_continuation_counts_its_positions_after_the_ops_already_recorded():
    text = "{{setvar::r::{{roll::1d1000000}}}}"
    first = extract_ops(text, variables={}, random_key=(7, 1), first_position=0)
    later = extract_ops(text, variables={}, random_key=(7, 1), first_position=1)
    assert first.variables["r"] != later.variables["r"]


def test_a_forbidden_path_segment_is_refused_with_a_sentence_and_records_no_op():
    result = extract_ops("Hi {{setvar::npcs.__proto__.admin::true}}", variables={"npcs": "{}"})
    assert result.ops == ()
    assert result.variables == {"npcs": "{}"}
    assert "forbidden segment '__proto__'" in result.warnings[0]
    assert result.text == "Hi"


def test_a_write_without_a_name_is_removed_and_reported():
    result = extract_ops("{{setvar::::x}} after", variables={})
    assert result.ops == ()
    assert result.warnings
    assert result.text == "after"


def test_the_state_given_is_not_changed():
    state = {"hp": 5}
    extract_ops("{{setvar::hp::1}}", variables=state)
    assert state == {"hp": 5}


@pytest.mark.parametrize("text", ["plain words", "a { brace", "}} stray", ""])
def test_text_without_write_macros_passes_through_unchanged(text):
    result = extract_ops(text, variables={"a": 1})
    assert result.text == text
    assert result.ops == ()
    assert result.variables == {"a": 1}


def test_ops_are_values_not_macros():
    result = extract_ops("{{setvar::hp::{{roll::1d1}}}}", variables={})
    assert result.ops == (Op("setvar", "hp", "1"),)
