"""Storing turns and summaries, privacy settings (audited) and batched expiry."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memory import services
from memory.models import DiscordUser, StmEntry
from memory.selectors import expired_q
from servers import services as server_services
from servers.models import AuditEvent, Channel

from .conftest import HARBOR, LANTERN, MIRA, TOMAS


def turn(*texts: str) -> list[dict[str, str]]:
    return [{"role": "user", "name": "Mira", "content": t} for t in texts]


def test_storing_a_turn_creates_the_channel_the_user_and_the_entry(lantern):
    entry = services.stm_store_turn(server_id=LANTERN, channel_id=600, user_id=MIRA, messages=turn("hi"))
    assert Channel.objects.get(discord_id=600).server_id == LANTERN
    assert DiscordUser.objects.filter(pk=MIRA).exists()
    assert entry.messages == [{"role": "user", "name": "Mira", "content": "hi", "timestamp": ""}]


def test_storing_turns_keeps_the_last_ten_messages(lantern):
    for i in range(7):
        services.stm_store_turn(
            server_id=LANTERN, channel_id=600, user_id=MIRA, messages=turn(f"a{i}", f"b{i}")
        )
    entry = StmEntry.objects.get(channel__discord_id=600)
    expected = [f"{side}{i}" for i in range(2, 7) for side in "ab"]
    assert [m["content"] for m in entry.messages] == expected


def test_storing_a_turn_keeps_the_summary_and_refreshes_the_last_update(lantern):
    old = timezone.now() - timedelta(hours=5)
    services.stm_put_entry(
        server_id=LANTERN, channel_id=600, user_id=MIRA, messages=[], summary="kept", updated_at=old
    )
    entry = services.stm_store_turn(server_id=LANTERN, channel_id=600, user_id=TOMAS, messages=turn("hello"))
    assert entry.summary == "kept"
    assert entry.updated_at > old + timedelta(hours=4)
    assert entry.user_id == TOMAS  # server memories are shared: the last speaker


def test_an_expired_entry_starts_over_when_a_new_turn_arrives(lantern):
    services.stm_put_entry(
        server_id=LANTERN,
        channel_id=600,
        user_id=MIRA,
        messages=turn("stale"),
        summary="",
        updated_at=timezone.now() - timedelta(hours=13),
    )
    entry = services.stm_store_turn(server_id=LANTERN, channel_id=600, user_id=MIRA, messages=turn("fresh"))
    assert [m["content"] for m in entry.messages] == ["fresh"]


def test_a_summary_of_1500_characters_is_stored(lantern):
    entry = services.stm_update_summary(server_id=LANTERN, channel_id=600, user_id=MIRA, summary="x" * 1500)
    assert len(entry.summary) == 1500


def test_a_summary_over_1500_characters_is_refused_with_a_clear_sentence(lantern):
    with pytest.raises(services.StmError, match="1501 characters long; the limit is 1500"):
        services.stm_update_summary(server_id=LANTERN, channel_id=600, user_id=MIRA, summary="x" * 1501)
    assert not StmEntry.objects.exists()


def test_the_database_refuses_a_summary_over_the_limit(store):
    entry = store(600)
    with pytest.raises(IntegrityError), transaction.atomic():
        StmEntry.objects.filter(pk=entry.pk).update(summary="y" * 1501)


def test_a_dm_entry_is_in_no_guild_and_belongs_to_the_server_whose_bot_stored_it(lantern):
    entry = services.stm_store_turn(
        server_id=LANTERN, dm=True, channel_id=900, user_id=MIRA, messages=turn("psst")
    )
    assert (entry.server_id, entry.owner_id) == (None, LANTERN)
    assert Channel.objects.get(discord_id=900).is_dm


def test_the_same_channel_id_under_two_servers_is_two_records(store, harbor):
    store(600, summary="Lantern's")
    harbors = services.stm_store_turn(server_id=HARBOR, channel_id=600, user_id=MIRA, messages=turn("x"))
    lanterns = StmEntry.objects.get(owner_id=LANTERN, channel__discord_id=600)
    assert harbors.pk != lanterns.pk and harbors.channel_id != lanterns.channel_id
    assert (lanterns.summary, lanterns.messages) == ("Lantern's", [])


def test_a_servers_own_dm_channel_is_not_also_its_server_channel(lantern):
    services.stm_store_turn(server_id=LANTERN, dm=True, channel_id=900, user_id=MIRA, messages=turn("a"))
    with pytest.raises(services.StmError, match="direct-message channel"):
        services.stm_store_turn(server_id=LANTERN, channel_id=900, user_id=MIRA, messages=turn("b"))


def test_bob_marking_a_channel_private_is_audited(store, lantern, bob):
    store(600)
    server_services.channel_set_private(
        server=lantern, channel=Channel.objects.get(discord_id=600), private=True, by=bob
    )
    event = AuditEvent.objects.get(action="stm.channel_private")
    assert (event.actor, event.server_id, event.detail["channel"]) == (bob, LANTERN, 600)
    assert Channel.objects.get(discord_id=600).is_private


def test_alice_turning_the_bypass_on_is_audited(lantern, alice):
    services.server_set_privacy_bypass(server=lantern, bypass=True, by=alice)
    lantern.refresh_from_db()
    assert lantern.stm_privacy_bypass
    assert AuditEvent.objects.filter(action="stm.bypass_on", actor=alice, server=lantern).exists()


def test_expiry_deletes_expired_entries_and_keeps_live_ones(store):
    store(600, hours_ago=13)
    store(601, hours_ago=25, summary="old summary")
    store(602, hours_ago=13, summary="a summary keeps it for 24 hours")
    store(603, hours_ago=1)
    report = services.expire_entries(batch_size=1)
    assert report.deleted == 2
    assert report.batches == 2
    assert set(StmEntry.objects.values_list("channel__discord_id", flat=True)) == {602, 603}


def test_running_expiry_twice_deletes_nothing_more(store):
    store(600, hours_ago=13)
    services.expire_entries()
    assert services.expire_entries().deleted == 0


def test_an_entry_refreshed_between_selection_and_delete_survives(store):
    now = timezone.now()
    stale = store(600, hours_ago=13)
    picked = list(StmEntry.objects.filter(expired_q(now=now)).values_list("id", flat=True))
    assert picked == [stale.pk]
    services.stm_store_turn(server_id=LANTERN, channel_id=600, user_id=MIRA, messages=turn("back again"))
    assert services.delete_expired(picked, now=now) == 0
    assert StmEntry.objects.filter(pk=stale.pk).exists()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_two_expiry_runs_at_once_delete_each_expired_entry_once_and_nothing_else(store):
    for channel in range(1000, 1400):
        store(channel, hours_ago=13 if channel % 4 else 1)
    results: list[int] = []

    def run() -> None:
        try:
            results.append(services.expire_entries(batch_size=25).deleted)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sum(results) == 300
    assert StmEntry.objects.count() == 100
    assert not StmEntry.objects.filter(expired_q(now=timezone.now())).exists()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_two_turns_stored_at_once_in_a_new_channel_both_land_in_one_entry(lantern):
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def store_turn(text: str) -> None:
        try:
            start.wait(timeout=10)
            services.stm_store_turn(server_id=LANTERN, channel_id=650, user_id=MIRA, messages=turn(text))
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=store_turn, args=(f"turn {i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    entry = StmEntry.objects.get(channel__discord_id=650)
    assert sorted(m["content"] for m in entry.messages) == ["turn 0", "turn 1", "turn 2", "turn 3"]
