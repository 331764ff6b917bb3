"""Ops applied to a state, and replay from an empty state (docs/conversations.md)."""

from __future__ import annotations

import json

import pytest

from engine.macros.replay import Op, OpError, apply_ops, make_op, op_from_dict, replay, replay_steps

ROSTER = json.dumps({"alice": {"hp": 10, "items": ["sword"]}, "bob": {"hp": 4}})


def state_after(*ops: Op, start: dict | None = None) -> dict:
    return apply_ops(start or {}, ops).variables


def test_replay_starts_from_an_empty_state_so_a_key_no_op_mentions_is_absent():
    assert replay([[make_op("setvar", "hp", "5")], []]).variables == {"hp": "5"}


def test_replay_applies_messages_in_order():
    result = replay(
        [[make_op("setvar", "hp", "5")], [make_op("addvar", "hp", "3")], [make_op("incvar", "hp")]]
    )
    assert result.variables == {"hp": 9}


def test_replay_steps_give_the_state_after_each_message():
    steps = replay_steps(
        [[make_op("setvar", "hp", "5")], [make_op("setvar", "mp", "1")], [make_op("deletevar", "hp")]]
    )
    assert [step.variables for step in steps] == [{"hp": "5"}, {"hp": "5", "mp": "1"}, {"mp": "1"}]


def test_an_op_leaves_keys_it_does_not_mention_untouched():
    start = {"mood": "calm", "npcs": ROSTER}
    after = state_after(make_op("setvar", "npcs.bob.hp", "9"), start=start)
    assert after["mood"] == "calm"
    assert json.loads(after["npcs"])["alice"] == {"hp": 10, "items": ["sword"]}


def test_setvar_on_a_path_writes_inside_the_json_value_and_keeps_it_text():
    after = state_after(make_op("setvar", "npcs.alice.hp", "7"), start={"npcs": ROSTER})
    assert json.loads(after["npcs"])["alice"]["hp"] == 7


def test_setvar_on_a_path_creates_missing_objects_on_the_way():
    after = state_after(make_op("setvar", "npcs.carol.hp", "3"), start={"npcs": ROSTER})
    assert json.loads(after["npcs"])["carol"] == {"hp": 3}


def test_setvar_on_a_path_whose_head_is_not_json_falls_back_to_the_flat_key_as_getvar_does():
    assert state_after(make_op("setvar", "a.b", "1")) == {"a.b": "1"}


def test_deletevar_on_a_path_removes_only_that_entry():
    after = state_after(make_op("deletevar", "npcs.bob"), start={"npcs": ROSTER})
    assert json.loads(after["npcs"]) == {"alice": {"hp": 10, "items": ["sword"]}}


def test_addvar_on_a_path_holding_an_array_pushes_at_the_path():
    after = state_after(make_op("addvar", "npcs.alice.items", "shield"), start={"npcs": ROSTER})
    assert json.loads(after["npcs"])["alice"]["items"] == ["sword", "shield"]


def test_addvar_on_a_path_holding_a_number_adds_there_and_never_touches_the_root_text():
    after = state_after(make_op("addvar", "npcs.bob.hp", "2.5"), start={"npcs": ROSTER})
    roster = json.loads(after["npcs"])
    assert roster["bob"]["hp"] == 6.5
    assert roster["alice"] == {"hp": 10, "items": ["sword"]}


def test_incvar_and_decvar_on_a_path_change_the_number_there():
    after = state_after(
        make_op("incvar", "npcs.alice.hp"), make_op("decvar", "npcs.bob.hp"), start={"npcs": ROSTER}
    )
    roster = json.loads(after["npcs"])
    assert (roster["alice"]["hp"], roster["bob"]["hp"]) == (11, 3)


def test_incvar_on_a_missing_path_counts_from_zero():
    after = state_after(make_op("incvar", "npcs.alice.level"), start={"npcs": ROSTER})
    assert json.loads(after["npcs"])["alice"]["level"] == 1


def test_numeric_segments_index_arrays():
    after = state_after(make_op("setvar", "npcs.alice.items.0", "axe"), start={"npcs": ROSTER})
    assert json.loads(after["npcs"])["alice"]["items"] == ["axe"]


def test_a_root_that_holds_a_json_object_stays_an_object():
    after = state_after(make_op("setvar", "inv.gold", "5"), start={"inv": {"gold": 1}})
    assert after == {"inv": {"gold": 5}}


def test_addvar_adds_numbers_appends_text_and_pushes_onto_arrays_at_the_root():
    after = state_after(
        make_op("setvar", "n", "5"),
        make_op("addvar", "n", "3"),
        make_op("setvar", "s", "ab"),
        make_op("addvar", "s", "c"),
        make_op("setvar", "list", '["a"]'),
        make_op("addvar", "list", "b"),
        make_op("addvar", "fresh", "2"),
    )
    assert after == {"n": 8, "s": "abc", "list": ["a", "b"], "fresh": 2}


def test_incvar_and_decvar_on_text_append_the_step_as_sillytavern_does():
    # SillyTavern 1.18 sent "abc1" for {{incvar}} on "abc" (fidelity case own-vars-text)
    result = apply_ops({"mood": "calm"}, [make_op("incvar", "mood"), make_op("decvar", "mood")])
    assert result.variables == {"mood": "calm1-1"}
    assert result.warnings == ()


def test_a_path_through_a_value_that_is_not_a_collection_warns_and_changes_nothing():
    result = apply_ops({"npcs": ROSTER}, [make_op("setvar", "npcs.bob.hp.max", "1")])
    assert result.variables == {"npcs": ROSTER}
    assert "not an object or array" in result.warnings[0]


@pytest.mark.parametrize("segment", ["__proto__", "constructor", "prototype"])
def test_a_forbidden_segment_is_refused_with_a_clear_message(segment):
    with pytest.raises(OpError, match=f"forbidden segment '{segment}'"):
        make_op("setvar", f"npcs.{segment}.x", "1")


def test_a_stored_op_with_a_forbidden_segment_is_refused_at_replay_too():
    result = replay([[Op("setvar", "npcs", "{}"), Op("setvar", "npcs.__proto__.x", "1")]])
    assert result.variables == {"npcs": "{}"}
    assert "__proto__" in result.warnings[0]


def test_an_unknown_op_name_is_refused():
    with pytest.raises(OpError, match="is not an op"):
        op_from_dict({"op": "getvar", "key": "x"})


def test_op_names_are_case_insensitive_and_keys_are_trimmed():
    assert op_from_dict({"op": "SetVar", "key": " hp ", "value": "1"}) == Op("setvar", "hp", "1")


def test_value_less_ops_drop_any_value_given():
    assert make_op("incvar", "turn", "ignored").as_dict() == {"op": "incvar", "key": "turn"}
