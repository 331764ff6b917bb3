"""The pure contributor: one verdict per entry, the memory block, the same-channel items, the tail
directive — no database."""

from __future__ import annotations

from datetime import datetime

from engine import StmContext, StmMessage, StmPolicy, StmSettings, contribute
from tests.engine.stm.conftest import HARBOR, LANTERN, MIRA, NOW

HERE = 500  # the channel the turn happens in


def run(entries, *, policy=None, settings=None, **context):
    context.setdefault("channel", HERE)
    context.setdefault("user", MIRA)
    return contribute(
        entries=entries,
        context=StmContext(**context),
        settings=settings or StmSettings(),
        now=NOW,
        policy=policy or StmPolicy(server_id=LANTERN),
    )


def verdicts(result) -> dict[int, str]:
    return {v.entry_id: v.verdict for v in result.verdicts}


def test_a_recent_memory_of_another_channel_is_shown_in_one_user_item(snapshot):
    result = run([snapshot(1, 600, hours_ago=2, summary="Mira ordered the house ale.")])
    assert verdicts(result) == {1: "shown"}
    assert len(result.items) == 1
    assert result.items[0].role == "user"
    assert result.items[0].text == (
        "[System: You remember a recent conversation in <#600> (2 hours ago): Mira ordered the house ale.]"
    )


def test_the_bot_name_says_who_remembers(snapshot):
    result = run([snapshot(1, 600, summary="ale")], bot_name="Lantern")
    assert result.items[0].text.startswith("[System: Lantern remembers a recent conversation in <#600>")


def test_a_memory_without_a_summary_shows_its_messages(snapshot):
    messages = (StmMessage("user", "Mira", "Any ale?"), StmMessage("assistant", "", "Plenty."))
    result = run([snapshot(1, 600, messages=messages)])
    assert result.items[0].text.endswith("(1 hour ago): Mira: Any ale?\nassistant: Plenty.]")


def test_an_entry_without_a_summary_expires_strictly_after_twelve_hours(snapshot):
    result = run([snapshot(1, 600, hours_ago=12), snapshot(2, 601, hours_ago=12.01)])
    assert verdicts(result) == {1: "shown", 2: "expired"}


def test_an_entry_with_a_summary_lives_twenty_four_hours(snapshot):
    result = run([snapshot(1, 600, hours_ago=23, summary="s"), snapshot(2, 601, hours_ago=24.5, summary="s")])
    assert verdicts(result) == {1: "shown", 2: "expired"}


def test_expiry_wins_over_every_other_verdict(snapshot):
    result = run([snapshot(1, HERE, hours_ago=13), snapshot(2, 600, hours_ago=13, channel_private=True)])
    assert verdicts(result) == {1: "expired", 2: "expired"}
    assert result.items == ()


def test_the_same_channel_entry_is_not_a_memory_of_another_channel(snapshot):
    result = run([snapshot(1, HERE, summary="We are here.")])
    assert verdicts(result) == {1: "same_channel"}
    assert result.same_channel_summary == "We are here."
    assert result.items == ()  # the model has no tools: no same-channel items


def test_with_tools_the_same_channel_summary_and_the_tool_hint_are_separate_items(snapshot):
    result = run(
        [snapshot(1, HERE, summary="We are here."), snapshot(2, 600)], has_tools=True, provider="openai"
    )
    assert [i.kind for i in result.items] == ["other_channels", "same_channel_summary", "tool_hint"]
    result = run([snapshot(1, HERE, summary="We are here.")], has_tools=True, provider="openai")
    assert "We are here." in result.items[0].text
    assert "update_short_term_memory" in result.items[1].text
    assert "We are here." not in result.items[1].text


def test_novelai_gets_the_summary_but_not_the_tool_hint(snapshot):
    result = run([snapshot(1, HERE, summary="We are here.")], has_tools=True, provider="NovelAI")
    assert [("We are here." in i.text) for i in result.items] == [True]
    assert not any("update_short_term_memory" in i.text for i in result.items)


def test_a_long_term_memory_request_suppresses_the_tool_hint(snapshot):
    result = run([snapshot(1, HERE, summary="We are here.")], has_tools=True, long_term_intent=True)
    assert len(result.items) == 1
    assert "update_short_term_memory" not in result.items[0].text


def test_six_cached_messages_without_a_summary_ask_the_model_to_create_one(snapshot):
    result = run([snapshot(1, HERE, message_count=6)], has_tools=True)
    assert result.tail_directive is not None
    assert "update_short_term_memory" in result.tail_directive
    assert result.items == ()


def test_five_cached_messages_are_not_enough_for_the_create_directive(snapshot):
    assert run([snapshot(1, HERE, message_count=5)], has_tools=True).tail_directive is None


def test_the_create_directive_threshold_comes_from_the_settings(snapshot):
    result = run(
        [snapshot(1, HERE, message_count=2)], has_tools=True, settings=StmSettings(min_messages_for_summary=2)
    )
    assert result.tail_directive is not None


def test_no_create_directive_without_tools_or_for_novelai_or_when_a_summary_exists(snapshot):
    assert run([snapshot(1, HERE, message_count=8)]).tail_directive is None
    assert (
        run([snapshot(1, HERE, message_count=8)], has_tools=True, provider="novelai").tail_directive is None
    )
    assert run([snapshot(1, HERE, message_count=8, summary="s")], has_tools=True).tail_directive is None


def test_an_expired_same_channel_entry_gives_no_summary_and_no_directive(snapshot):
    result = run([snapshot(1, HERE, hours_ago=13, message_count=8)], has_tools=True)
    assert result.same_channel_summary == ""
    assert result.tail_directive is None


def test_a_private_channels_memory_is_hidden_elsewhere(snapshot):
    result = run([snapshot(1, 600, channel_private=True)])
    assert verdicts(result) == {1: "hidden_private_channel"}
    assert result.items == ()


def test_a_thread_inherits_privacy_from_its_parent(snapshot):
    result = run([snapshot(1, 601, parent_channel=600, parent_private=True)])
    assert verdicts(result) == {1: "hidden_private_parent"}


def test_private_memories_surface_when_the_server_bypass_is_on(snapshot):
    entries = [snapshot(1, 600, channel_private=True), snapshot(2, 601, parent_private=True)]
    result = run(entries, policy=StmPolicy(server_id=LANTERN, privacy_bypass=True))
    assert verdicts(result) == {1: "shown", 2: "shown"}


def test_private_memories_surface_inside_a_private_channel(snapshot):
    result = run(
        [snapshot(1, 600, channel_private=True)], policy=StmPolicy(server_id=LANTERN, channel_private=True)
    )
    assert verdicts(result) == {1: "shown"}


def test_private_memories_surface_inside_a_thread_of_a_private_channel(snapshot):
    result = run(
        [snapshot(1, 600, channel_private=True)], policy=StmPolicy(server_id=LANTERN, parent_private=True)
    )
    assert verdicts(result) == {1: "shown"}


def test_another_servers_memory_is_hidden_without_the_users_opt_in(snapshot):
    result = run([snapshot(1, 800, server=HARBOR, summary="Harbor talk")])
    assert verdicts(result) == {1: "hidden_no_opt_in"}
    assert result.items == ()


def test_with_the_opt_in_another_servers_channel_is_not_named(snapshot):
    policy = StmPolicy(server_id=LANTERN, consenting_servers=frozenset({HARBOR}))
    result = run([snapshot(1, 800, server=HARBOR, summary="Harbor talk")], policy=policy)
    assert verdicts(result) == {1: "shown"}
    assert "a channel in another server" in result.items[0].text
    assert "800" not in result.items[0].text


def test_another_servers_private_channels_stay_hidden_even_with_the_bypass_here(snapshot):
    policy = StmPolicy(server_id=LANTERN, consenting_servers=frozenset({HARBOR}), privacy_bypass=True)
    result = run([snapshot(1, 800, server=HARBOR, channel_private=True)], policy=policy)
    assert verdicts(result) == {1: "hidden_private_channel"}


def test_no_opt_in_is_reported_before_privacy(snapshot):
    result = run([snapshot(1, 800, server=HARBOR, channel_private=True)])
    assert verdicts(result) == {1: "hidden_no_opt_in"}


def test_the_cap_keeps_the_three_newest_and_cuts_the_rest(snapshot):
    entries = [snapshot(i, 600 + i, hours_ago=i) for i in range(1, 6)]
    result = run(list(reversed(entries)))
    assert verdicts(result) == {1: "shown", 2: "shown", 3: "shown", 4: "cut_by_cap", 5: "cut_by_cap"}
    text = result.items[0].text
    assert text.index("<#601>") < text.index("<#602>") < text.index("<#603>")


def test_hidden_memories_do_not_use_up_the_cap(snapshot):
    entries = [snapshot(1, 601, hours_ago=1, channel_private=True)] + [
        snapshot(i, 600 + i, hours_ago=i) for i in range(2, 6)
    ]
    result = run(entries)
    assert verdicts(result) == {
        1: "hidden_private_channel",
        2: "shown",
        3: "shown",
        4: "shown",
        5: "cut_by_cap",
    }


def test_the_cap_comes_from_the_settings(snapshot):
    result = run(
        [snapshot(1, 601), snapshot(2, 602, hours_ago=2)], settings=StmSettings(max_other_channels=1)
    )
    assert verdicts(result) == {1: "shown", 2: "cut_by_cap"}


def test_in_a_dm_the_users_dm_entries_are_remembered(snapshot):
    result = run(
        [snapshot(1, 901, server=None, summary="DM chat")],
        dm=True,
        channel=900,
        policy=StmPolicy(server_id=None),
    )
    assert verdicts(result) == {1: "shown"}
    assert "in a direct message" in result.items[0].text


def test_in_a_dm_server_memories_need_the_opt_in(snapshot):
    result = run(
        [snapshot(1, 600, summary="guild chat")], dm=True, channel=900, policy=StmPolicy(server_id=LANTERN)
    )
    assert verdicts(result) == {1: "hidden_no_opt_in"}


def test_a_dm_entry_never_reaches_a_server_whatever_consent_that_server_relayed(snapshot):
    entry = snapshot(1, 901, server=None, summary="DM chat")
    assert verdicts(run([entry])) == {1: "hidden_no_opt_in"}
    policy = StmPolicy(server_id=LANTERN, consenting_servers=frozenset({LANTERN, HARBOR}))
    assert verdicts(run([entry], policy=policy)) == {1: "hidden_no_opt_in"}


def test_consent_relayed_by_the_asking_server_opens_no_other_servers_memories(snapshot):
    policy = StmPolicy(server_id=LANTERN, consenting_servers=frozenset({LANTERN}))
    result = run([snapshot(1, 800, server=HARBOR, summary="Harbor talk")], policy=policy)
    assert verdicts(result) == {1: "hidden_no_opt_in"}
    assert result.items == ()


def test_impersonation_gets_no_tool_hint_and_no_directive(snapshot):
    result = run([snapshot(1, HERE, summary="s"), snapshot(2, 600)], has_tools=True, impersonation=True)
    assert not any("update_short_term_memory" in i.text for i in result.items)
    assert result.tail_directive is None


def test_an_error_gives_no_items_and_is_logged(snapshot, caplog):
    naive = snapshot(1, 600)
    broken = type(naive)(
        **{**{f: getattr(naive, f) for f in naive.__slots__}, "updated_at": datetime(2026, 11, 21)}
    )
    result = run([snapshot(2, 601), broken])
    assert result.items == ()
    assert result.verdicts == ()
    assert result.tail_directive is None
    assert "short-term memory contributor failed" in caplog.text
