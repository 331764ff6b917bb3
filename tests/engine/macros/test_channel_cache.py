"""A channel's variable cache under Luker's replay (docs/channels.md#variables)."""

from __future__ import annotations

from engine.macros import make_op, mentioned_keys, replay_into_cache


def test_a_key_a_preset_wrote_that_no_op_mentions_is_kept_after_a_deletion():
    cache = {"weather": "rain", "hp": "40"}
    surviving = [(make_op("setvar", "hp", "50"),)]
    result = replay_into_cache(cache, base={}, removed=[make_op("decvar", "hp")], surviving=surviving)
    assert result.variables == {"weather": "rain", "hp": "50"}


def test_keys_surviving_ops_mention_are_recomputed_from_an_empty_state():
    cache = {"gold": 115}  # a preset once added 100 on top of the ops
    surviving = [(make_op("setvar", "gold", "10"),), (make_op("addvar", "gold", "5"),)]
    assert replay_into_cache(cache, base={}, removed=[], surviving=surviving).variables == {"gold": 15}


def test_a_key_only_removed_ops_mentioned_is_removed():
    cache = {"quest": "dragon", "hp": "5"}
    result = replay_into_cache(
        cache,
        base={},
        removed=[make_op("setvar", "quest", "dragon")],
        surviving=[(make_op("setvar", "hp", "5"),)],
    )
    assert result.variables == {"hp": "5"}


def test_a_path_write_recomputes_its_head_variable():
    ops = [(make_op("setvar", "npcs", '{"mira": {"hp": 3}}'),), (make_op("setvar", "npcs.mira.hp", "7"),)]
    result = replay_into_cache({"npcs": "stale"}, base={}, removed=[], surviving=ops)
    assert result.variables == {"npcs": '{"mira":{"hp":7}}'}


def test_replay_starts_from_the_base_expired_messages_left():
    result = replay_into_cache(
        {}, base={"gold": 10}, removed=[], surviving=[(make_op("addvar", "gold", "5"),)]
    )
    assert result.variables == {"gold": 15}


def test_mentioned_keys_names_each_key_and_each_paths_head():
    assert mentioned_keys([make_op("incvar", "a.b"), make_op("setvar", "c", "1")]) == {"a.b", "a", "c"}
