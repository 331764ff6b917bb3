"""Loading STM from the database: the one path the assembler, review page and CLI share."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.actors import SYSTEM
from engine import StmContext
from memory import services
from memory.models import StmEntry
from memory.selectors import load_stm, stm_contribution
from servers import services as server_services
from servers.models import Channel
from tests.present import present

from .conftest import HARBOR, LANTERN, MIRA, TOMAS

HERE = 500


def review(**context):
    context.setdefault("channel", HERE)
    context.setdefault("user", MIRA)
    return load_stm(
        server_id=LANTERN, context=StmContext(**context), now=timezone.now(), include_expired=True
    )


def verdicts(loaded) -> dict[int, str]:
    return {v.channel: v.verdict for v in loaded.contribution.verdicts}


def test_the_assembler_never_reads_expired_entries(store):
    store(600, hours_ago=13)
    store(601, hours_ago=1)
    result = stm_contribution(
        server_id=LANTERN, context=StmContext(channel=HERE, user=MIRA), now=timezone.now()
    )
    assert {v.channel: v.verdict for v in result.verdicts} == {601: "shown"}


def test_the_review_sees_expired_entries_with_their_verdict(store):
    store(600, hours_ago=13)
    assert verdicts(review()) == {600: "expired"}


def test_server_memories_are_shared_between_users(store):
    store(600, user=TOMAS, summary="Tomas asked for work.")
    result = review()
    assert verdicts(result) == {600: "shown"}
    assert "Tomas asked for work." in result.contribution.items[0].text


def test_a_channel_marked_private_hides_its_memory_and_its_threads(store):
    store(600)
    store(601, parent_id=600)
    server_services.channel_set_private(
        server=present(Channel.objects.get(discord_id=600).server),
        channel=Channel.objects.get(discord_id=600),
        private=True,
        by=SYSTEM,
    )
    assert verdicts(review()) == {600: "hidden_private_channel", 601: "hidden_private_parent"}


def test_inside_a_thread_of_a_private_channel_private_memories_surface(store):
    store(600, private=True)
    store(601, parent_id=600, hours_ago=2)
    store(602, private=True, hours_ago=3)
    assert verdicts(review(channel=601)) == {600: "shown", 601: "same_channel", 602: "shown"}


def test_the_bot_may_name_the_parent_of_an_unknown_thread(store):
    store(600, private=True)
    store(602, private=True, hours_ago=3)
    assert verdicts(review(channel=999, parent_channel=600)) == {600: "shown", 602: "shown"}


def test_the_server_bypass_is_read_from_the_server(store, lantern):
    store(600, private=True)
    services.server_set_privacy_bypass(server=lantern, bypass=True, by=SYSTEM)
    assert verdicts(review()) == {600: "shown"}


def test_another_servers_entries_of_this_user_follow_that_servers_consent(store, lantern):
    store(600, summary="lantern")
    store(800, server=HARBOR, summary="harbor")
    store(801, server=HARBOR, user=TOMAS, summary="not Mira's")
    assert verdicts(review()) == {600: "shown", 800: "hidden_no_opt_in"}
    services.user_set_opt_in(user_id=MIRA, opt_in=True, server=LANTERN, by=SYSTEM)
    assert verdicts(review()) == {600: "shown", 800: "hidden_no_opt_in"}
    services.user_set_opt_in(user_id=MIRA, opt_in=True, server=HARBOR, by=SYSTEM)
    assert verdicts(review()) == {600: "shown", 800: "hidden_no_opt_in"}  # the Lantern receives none
    services.server_set_receive_other_servers(server=lantern, receive=True, by=SYSTEM)
    assert verdicts(review()) == {600: "shown", 800: "shown"}
    services.user_set_opt_in(user_id=MIRA, opt_in=False, server=HARBOR, by=SYSTEM)
    assert verdicts(review()) == {600: "shown", 800: "hidden_no_opt_in"}


def test_a_dm_channel_is_reviewed_as_a_dm(store):
    store(900, server=None, summary="dm now")
    store(901, server=None, summary="older dm", hours_ago=2)
    store(902, server=None, user=TOMAS, summary="Tomas's dm")
    store(600, summary="guild")
    loaded = review(channel=900)
    assert loaded.dm
    assert verdicts(loaded) == {900: "same_channel", 901: "shown", 600: "hidden_no_opt_in"}


def test_entries_of_another_persona_lineage_are_not_considered(store):
    store(600, lineage="knight")
    store(601)
    assert verdicts(review()) == {601: "shown"}
    assert verdicts(review(lineage="knight")) == {600: "shown"}


def test_the_contribution_takes_a_constant_number_of_queries(store, lantern):
    store(600)
    with CaptureQueriesContext(connection) as few:
        review(channel=601)
    for channel in range(1000, 1060):
        store(channel, private=channel % 3 == 0, parent_id=600 if channel % 5 == 0 else None)
        store(channel + 5000, server=HARBOR)
    with CaptureQueriesContext(connection) as many:
        loaded = review(channel=601)
    assert len(loaded.contribution.verdicts) == 121
    assert len(many) == len(few)


def test_a_corrupted_stored_entry_gives_no_items_and_is_logged(store, caplog):
    store(600, summary="fine")
    broken = store(601)
    StmEntry.objects.filter(pk=broken.pk).update(messages=5)  # not a list: written by hand, say
    loaded = review()
    assert loaded.contribution.items == ()
    assert loaded.contribution.verdicts == ()
    assert "short-term memory could not be loaded" in caplog.text
