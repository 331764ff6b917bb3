"""docs/worldinfo.md#activation, docs/worldinfo.md#timed-effects: passes, recursion, groups, probability,
budget, timed effects, gates."""

from __future__ import annotations

import json

from engine.worldinfo.fields import entry_from_st
from engine.worldinfo.importer import parse_lorebook

from .conftest import book, compile_book, reasons, run, uids


def test_a_constant_entry_activates_without_keys() -> None:
    result = run(book({"constant": True, "content": "Always."}), ("hi",))
    assert uids(result) == [0] and result.activated[0].reason == "constant"


def test_a_disabled_entry_never_activates() -> None:
    assert uids(run(book({"constant": True, "disable": True, "content": "x"}), ("hi",))) == []


def test_an_entry_without_keys_that_is_not_constant_is_skipped() -> None:
    assert uids(run(book({"content": "x"}), ("hi",))) == []


def test_recursion_lets_an_activated_entrys_text_trigger_another() -> None:
    lore = book(
        {"key": ["castle"], "content": "The castle has a moat."},
        {"key": ["moat"], "content": "The moat hides eels."},
    )
    result = run(lore, ("to the castle",))
    assert uids(result) == [0, 1]
    assert result.activated[1].reason == 'key "moat" in recursion' and result.activated[1].pass_number == 2
    assert uids(run(lore, ("to the castle",), settings={"recursive": False})) == [0]


def test_prevent_recursion_keeps_an_entrys_text_out_of_the_recursion_scan() -> None:
    lore = book(
        {"key": ["castle"], "preventRecursion": True, "content": "The castle has a moat."},
        {"key": ["moat"], "content": "Eels."},
    )
    assert uids(run(lore, ("to the castle",))) == [0]


def test_exclude_recursion_means_an_entry_can_only_activate_from_the_chat() -> None:
    lore = book(
        {"key": ["castle"], "content": "The castle has a moat."},
        {"key": ["moat"], "excludeRecursion": True, "content": "Eels."},
    )
    assert uids(run(lore, ("to the castle",))) == [0]
    assert uids(run(lore, ("the castle moat",))) == [0, 1]


def test_delay_until_recursion_waits_for_a_recursion_pass() -> None:
    lore = book(
        {"key": ["castle"], "content": "The castle has a moat."},
        {"key": ["castle"], "delayUntilRecursion": True, "content": "Later."},
    )
    result = run(lore, ("to the castle",))
    assert uids(result) == [0, 1]
    assert result.activated[1].pass_number == 2


def test_delay_until_recursion_levels_run_in_order_with_recursion_on() -> None:
    lore = book(
        {"key": ["castle"], "delayUntilRecursion": 2, "content": "Level two."},
        {"key": ["castle"], "delayUntilRecursion": 1, "content": "Level one."},
        {"key": ["castle"], "content": "The castle."},
    )
    passes = {a.entry.uid: a.pass_number for a in run(lore, ("to the castle",)).activated}
    assert passes == {2: 1, 1: 2, 0: 4}  # pass 3 recurses at level 1 and finds nothing new


def test_with_recursion_off_the_first_delayed_pass_is_already_at_the_next_level() -> None:
    # SillyTavern 1.18 (fidelity case own-wi-logic-no-recursion): the first level is reached only by
    # ordinary recursion; when the scan would end it moves on to the next level, so both come in at once
    lore = book(
        {"key": ["castle"], "delayUntilRecursion": 2, "content": "Level two."},
        {"key": ["castle"], "delayUntilRecursion": 1, "content": "Level one."},
    )
    result = run(lore, ("to the castle",), settings={"recursive": False})
    assert {a.entry.uid: a.pass_number for a in result.activated} == {0: 2, 1: 2}


def test_with_recursion_off_a_lone_first_level_never_runs() -> None:
    lore = book({"key": ["castle"], "content": "The moat."}, {"key": ["castle"], "delayUntilRecursion": 1})
    assert uids(run(lore, ("to the castle",), settings={"recursive": False})) == [0]


def test_exclude_recursion_applies_only_while_recursive_scanning_is_on() -> None:
    lore = book(
        {"key": ["castle"], "content": "The moat."},
        {"key": ["moat"], "excludeRecursion": True, "content": "Excluded."},
        {"key": ["castle"], "delayUntilRecursion": 2, "content": "Later."},
        {"key": ["nothing"], "delayUntilRecursion": 1, "content": "Never."},
    )
    assert sorted(uids(run(lore, ("to the castle",)))) == [0, 2]
    assert sorted(uids(run(lore, ("to the castle",), settings={"recursive": False}))) == [0, 1, 2]


def test_max_recursion_steps_bounds_the_passes() -> None:
    lore = book(
        {"key": ["a1"], "content": "a2"},
        {"key": ["a2"], "content": "a3"},
        {"key": ["a3"], "content": "a4"},
    )
    assert uids(run(lore, ("a1",))) == [0, 1, 2]
    assert uids(run(lore, ("a1",), settings={"max_recursion": 2})) == [0, 1]


def test_min_activations_scans_deeper_until_enough_entries_are_active() -> None:
    lore = book({"key": ["old"], "content": "x"}, {"key": ["older"], "content": "y"})
    messages = ("older", "old", "b", "c")
    assert uids(run(lore, messages)) == []
    result = run(lore, messages, settings={"min_activations": 2})
    assert sorted(uids(result)) == [0, 1]


def test_min_activations_stops_at_its_depth_cap() -> None:
    lore = book({"key": ["old"], "content": "x"})
    messages = ("old", "a", "b", "c")
    assert uids(run(lore, messages, settings={"min_activations": 1})) == [0]
    # SillyTavern 1.18 checks the cap before it widens the scan, so it scans one message past it
    assert uids(run(lore, messages, settings={"min_activations": 1, "min_activations_depth_max": 3})) == [0]
    assert uids(run(lore, messages, settings={"min_activations": 1, "min_activations_depth_max": 2})) == []


def test_an_inclusion_group_keeps_one_member_and_says_who_won() -> None:
    lore = book(
        {"uid": 1, "key": ["storm"], "group": "weather", "groupOverride": True, "order": 10, "content": "a"},
        {"uid": 2, "key": ["storm"], "group": "weather", "order": 50, "content": "b"},
    )
    result = run(lore, ("a storm",))
    assert uids(result) == [1]
    assert reasons(result) == {2: "group lost to uid 1"}


def test_group_override_picks_the_highest_order_override() -> None:
    lore = book(
        {"uid": 1, "key": ["storm"], "group": "w", "groupOverride": True, "order": 10, "content": "a"},
        {"uid": 2, "key": ["storm"], "group": "w", "groupOverride": True, "order": 90, "content": "b"},
    )
    assert uids(run(lore, ("a storm",))) == [2]


def test_group_weights_draw_with_the_seed() -> None:
    lore = book(
        {"uid": 1, "key": ["storm"], "group": "w", "groupWeight": 1, "content": "a"},
        {"uid": 2, "key": ["storm"], "group": "w", "groupWeight": 1000, "content": "b"},
    )
    winners = [uids(run(lore, ("storm",), seed=seed))[0] for seed in range(40)]
    assert winners.count(2) > 35
    assert [uids(run(lore, ("storm",), seed=s)) for s in range(5)] == [
        uids(run(lore, ("storm",), seed=s)) for s in range(5)
    ]


def test_group_scoring_keeps_only_the_members_with_the_most_matching_keys() -> None:
    lore = book(
        {"uid": 1, "key": ["storm"], "group": "w", "content": "a", "groupWeight": 1000},
        {"uid": 2, "key": ["storm", "rain"], "group": "w", "content": "b", "groupWeight": 1},
    )
    result = run(lore, ("storm and rain",), settings={"group_scoring": True}, seed=3)
    assert uids(result) == [2]


def test_a_group_that_won_in_an_earlier_pass_keeps_no_member_later() -> None:
    lore = book(
        {"uid": 1, "key": ["storm"], "group": "w", "content": "thunder"},
        {"uid": 2, "key": ["thunder"], "group": "w", "content": "b"},
    )
    result = run(lore, ("storm",))
    assert uids(result) == [1]
    assert 2 in reasons(result)


def test_sticky_members_win_their_group() -> None:
    sticky = {"uid": 1, "key": ["storm"], "group": "w", "sticky": 3, "content": "a"}
    earlier = run(book(sticky), ("storm",), chat_length=5)  # it activated alone two messages ago
    lore = book(
        sticky,
        {"uid": 2, "key": ["storm"], "group": "w", "groupOverride": True, "order": 500, "content": "b"},
    )
    result = run(lore, ("storm",), chat_length=6, state=earlier.state)
    assert uids(result) == [1]
    assert reasons(result) == {2: "group lost to uid 1"}


def test_probability_is_a_seeded_draw() -> None:
    lore = book({"key": ["coin"], "probability": 50, "content": "x"})
    outcomes = [bool(uids(run(lore, ("coin",), seed=seed))) for seed in range(60)]
    assert 10 < sum(outcomes) < 50
    assert outcomes == [bool(uids(run(lore, ("coin",), seed=seed))) for seed in range(60)]
    failed = next(seed for seed, ok in enumerate(outcomes) if not ok)
    assert reasons(run(lore, ("coin",), seed=failed)) == {0: "probability 50 %"}


def test_probability_off_always_activates() -> None:
    lore = book({"key": ["coin"], "probability": 0, "useProbability": False, "content": "x"})
    assert all(uids(run(lore, ("coin",), seed=s)) == [0] for s in range(10))


def test_the_budget_drops_the_entry_that_reaches_it_and_every_later_one() -> None:
    # SillyTavern 1.18 counts the pass's entries so far as one system message: its text + 6 tokens
    lore = book(
        {"uid": 1, "constant": True, "order": 300, "content": "one two three"},
        {"uid": 2, "constant": True, "order": 200, "content": "four five six seven"},
        {"uid": 3, "constant": True, "order": 100, "content": "eight"},
    )
    result = run(lore, ("hi",), settings={"budget_percent": 100, "context_size": 13})
    assert uids(result) == [1]
    assert reasons(result) == {2: "budget", 3: "budget"}
    assert result.tokens == 3 + 6 and result.budget == 13


def test_the_budget_counts_what_earlier_passes_added_to_the_scan_but_not_prevent_recursion_entries() -> None:
    # pass 1: "lamp oil" (2 words + 6); pass 2 counts it again with its own text: 2 + 6 + 4 + 6 = 18,
    # dropped once that reaches the budget
    lore = book(
        {"uid": 1, "key": ["lamp"], "content": "lamp oil"},
        {"uid": 2, "key": ["oil"], "content": "oil from the cellar"},
    )
    assert uids(run(lore, ("the lamp",), settings={"budget_percent": 100, "context_size": 19})) == [1, 2]
    assert uids(run(lore, ("the lamp",), settings={"budget_percent": 100, "context_size": 18})) == [1]
    unseen = book(
        {"uid": 1, "key": ["lamp"], "content": "lamp oil", "preventRecursion": True},
        {"uid": 2, "key": ["lamp"], "content": "x", "delayUntilRecursion": 2},
        {"uid": 3, "key": ["oil"], "content": "oil from the cellar"},
        {"uid": 4, "key": ["nothing"], "delayUntilRecursion": 1},
    )

    # uid 1 (2 + 6) stays out of the later passes' count: uid 2's pass costs 1 + 6 only, uid 3 never matches
    assert uids(run(unseen, ("the lamp",), settings={"budget_percent": 100, "context_size": 10})) == [1, 2]


def test_an_entry_one_token_under_the_budget_comes_in_and_one_at_the_budget_does_not() -> None:
    # SillyTavern 1.18 (world-info.js, the budget check) stops at `>= budget`, an entry costing its
    # text + 6 (tokenizers.js: the count starts at -1, the server adds 3 + 1 + 3): two words cost 8
    lore = book({"uid": 1, "constant": True, "content": "lamp oil"})
    assert uids(run(lore, ("hi",), settings={"budget_percent": 100, "context_size": 9})) == [1]
    assert uids(run(lore, ("hi",), settings={"budget_percent": 100, "context_size": 8})) == []


def test_ignore_budget_entries_activate_after_the_budget_overflowed() -> None:
    lore = book(
        {"uid": 1, "constant": True, "order": 300, "content": "one two three"},
        {"uid": 2, "constant": True, "order": 200, "content": "four five six seven"},
        {"uid": 3, "constant": True, "order": 100, "ignoreBudget": True, "content": "eight"},
    )
    result = run(lore, ("hi",), settings={"budget_percent": 100, "context_size": 13})
    assert uids(result) == [1, 3]


def test_the_budget_cap_limits_the_percentage() -> None:
    lore = book({"constant": True, "content": "one two three four five"})
    assert uids(run(lore, ("hi",), settings={"budget_cap": 4})) == []
    assert uids(run(lore, ("hi",), settings={"budget_cap": 50})) == [0]


def test_the_documents_budget_context_sets_the_budget() -> None:
    lore = book({"constant": True, "content": "one two three four five"})
    assert uids(run(lore, ("hi",), budget_context=20)) == []  # 25 % of 20 = 5 tokens, reached
    assert uids(run(lore, ("hi",), budget_context=100)) == [0]


def test_sticky_keeps_an_entry_active_then_cooldown_blocks_it() -> None:
    lore = book({"key": ["storm"], "sticky": 2, "cooldown": 2, "content": "x"})
    first = run(lore, ("storm",), chat_length=10)
    assert uids(first) == [0]
    second = run(lore, ("calm",), chat_length=11, state=first.state)
    assert uids(second) == [0] and second.activated[0].reason == "sticky"
    third = run(lore, ("storm",), chat_length=12, state=second.state)
    assert uids(third) == []
    assert reasons(third) == {0: "cooldown until message 14"}
    fourth = run(lore, ("storm",), chat_length=14, state=third.state)
    assert uids(fourth) == [0]


def test_cooldown_without_sticky_starts_at_activation() -> None:
    lore = book({"key": ["storm"], "cooldown": 3, "content": "x"})
    first = run(lore, ("storm",), chat_length=4)
    assert uids(run(lore, ("storm",), chat_length=6, state=first.state)) == []
    assert uids(run(lore, ("storm",), chat_length=7, state=first.state)) == [0]


def test_a_timer_record_from_a_swiped_message_is_discarded() -> None:
    lore = book({"key": ["storm"], "cooldown": 3, "content": "x"})
    first = run(lore, ("storm",), chat_length=4)
    assert uids(run(lore, ("storm",), chat_length=4, state=first.state)) == [0]


def test_editing_an_entrys_content_restarts_its_timers() -> None:
    first = run(book({"key": ["storm"], "cooldown": 3, "content": "old"}), ("storm",), chat_length=4)
    edited = book({"key": ["storm"], "cooldown": 3, "content": "new"})
    assert uids(run(edited, ("storm",), chat_length=5, state=first.state)) == [0]


def test_delay_needs_that_many_messages_in_the_chat() -> None:
    lore = book({"key": ["storm"], "delay": 5, "content": "x"})
    result = run(lore, ("storm",), chat_length=4)
    assert uids(result) == [] and reasons(result) == {0: "delay"}
    assert uids(run(lore, ("storm",), chat_length=5)) == [0]


def test_triggers_limit_an_entry_to_generation_types() -> None:
    lore = book({"key": ["storm"], "triggers": ["continue"], "content": "x"})
    result = run(lore, ("storm",))
    assert uids(result) == [] and reasons(result) == {0: "trigger"}
    assert uids(run(lore, ("storm",), generation_type="continue")) == [0]


def test_the_character_filter_includes_or_excludes_by_name() -> None:
    only = book(
        {"key": ["storm"], "characterFilter": {"names": ["Mira"], "isExclude": False}, "content": "x"}
    )
    never = book(
        {"key": ["storm"], "characterFilter": {"names": ["Mira"], "isExclude": True}, "content": "x"}
    )
    assert uids(run(only, ("storm",))) == [0]
    assert uids(run(only, ("storm",), names={"user": "Ann", "char": "Zed"})) == []
    assert reasons(run(never, ("storm",))) == {0: "filter"}


def test_decorators_force_or_forbid_activation_and_are_removed_from_the_text() -> None:
    lore = book(
        {"content": "@@activate\nAlways here."},
        {"key": ["storm"], "content": "@@dont_activate\nNever."},
    )
    result = run(lore, ("storm",))
    assert uids(result) == [0]
    assert result.activated[0].content == "Always here." and result.activated[0].reason == "decorator"


def test_character_book_entries_come_first_by_default_and_the_strategy_changes_it() -> None:
    world = book({"constant": True, "order": 900, "content": "w"}, name="World")
    character = book({"constant": True, "order": 1, "content": "c"}, name="Card", character=True)
    assert [a.entry.book for a in run([world, character], ("hi",)).activated] == ["Card", "World"]
    flipped = run([world, character], ("hi",), settings={"strategy": "global_first"})
    assert [a.entry.book for a in flipped.activated] == ["World", "Card"]


def _shared_uid_book(*raws: tuple[str, dict]):
    """A World Info file whose object keys and uids disagree, read by the importer and stored again."""
    data = {"entries": {key: {"comment": "", "order": 100, **raw} for key, raw in raws}}
    parsed = parse_lorebook(json.dumps(data).encode(), filename="Harbour.json")
    stored = [entry_from_st(e.to_st(), e.uid) for e in parsed.entries]  # as the database keeps it
    return compile_book("Harbour", stored)


def test_entries_sharing_a_uid_send_one_text_the_last_activated_in_the_first_ones_place() -> None:
    # SillyTavern 1.18 (world-info.js) keeps activated entries in a Map keyed by book and uid: a
    # later entry of the same uid replaces the earlier one's text where the earlier one stood
    lore = _shared_uid_book(
        ("0", {"uid": 0, "key": ["lamp"], "content": "Lamp."}),
        ("1", {"uid": 1, "key": ["rope"], "content": "Rope."}),
        ("2", {"uid": 1, "key": ["net"], "content": "Net."}),
        ("3", {"uid": 1, "key": ["anchor"], "content": "Anchor."}),
        ("4", {"uid": 4, "key": ["tide"], "content": "Tide."}),
    )
    result = run(lore, ("rope, net, anchor, lamp and tide",))
    assert [a.content for a in result.activated] == ["Lamp.", "Anchor.", "Tide."]
    assert {s.reason for s in result.skipped} == {"shares uid 1 with a later entry, sent in its place"}
    alone = run(lore, ("just the net",))
    assert [a.content for a in alone.activated] == ["Net."]


def test_an_entry_whose_uid_came_in_on_an_earlier_pass_is_never_activated() -> None:
    lore = _shared_uid_book(
        ("0", {"uid": 0, "key": ["lamp"], "content": "Lamp with a new rope."}),
        ("1", {"uid": 1, "key": ["rope"], "content": "Rope."}),
        ("2", {"uid": 1, "key": ["net"], "content": "Net."}),
    )
    assert [a.content for a in run(lore, ("the lamp and the net",)).activated] == [
        "Lamp with a new rope.",
        "Net.",
    ]
