"""Upgrading to channels stored once: what memory and the pushed directory knew of each channel is
still known afterwards, in servers' one channel table (docs/memory.md)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.present import present

BEFORE = [
    ("servers", "0012_audit_actions_of_recall_and_private_context"),
    ("memory", "0005_per_server_namespaces_constraints"),
    ("conversations", "0003_channel_private_context"),
]
HALL, OFFICERS, PLANS, DM, CELLAR, VAULT, QUESTS, BOARD = 700, 701, 702, 703, 704, 705, 706, 707


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_every_channel_keeps_its_privacy_thread_dm_and_memories_after_the_upgrade(lantern, harbor) -> None:
    old = _migrate(BEFORE)
    Channel = old.get_model("memory", "Channel")
    StmEntry = old.get_model("memory", "StmEntry")
    DiscordUser = old.get_model("memory", "DiscordUser")
    ServerDirectory = old.get_model("servers", "ServerDirectory")
    hall = Channel.objects.create(owner_id=lantern.pk, server_id=lantern.pk, discord_id=HALL, name="hall")
    # An admin made #officers private after the bot had pushed it as public.
    officers = Channel.objects.create(
        owner_id=lantern.pk, server_id=lantern.pk, discord_id=OFFICERS, name="officers", is_private=True
    )
    plans = Channel.objects.create(
        owner_id=lantern.pk, server_id=lantern.pk, discord_id=PLANS, name="plans", parent=officers
    )
    dm = Channel.objects.create(owner_id=lantern.pk, server_id=None, discord_id=DM)
    # Harbor's bot knows the same Discord id as its own, public channel.
    harbors = Channel.objects.create(owner_id=harbor.pk, server_id=harbor.pk, discord_id=OFFICERS, name="o")
    mira = DiscordUser.objects.create(id=42)
    entries = {
        channel.pk: StmEntry.objects.create(
            owner_id=channel.owner_id,
            server_id=channel.server_id,
            channel=channel,
            user=mira,
            messages=[{"role": "user", "name": "Mira", "content": f"in {channel.discord_id}"}],
            updated_at="2026-01-01T00:00:00Z",
        ).pk
        for channel in (hall, officers, plans, dm, harbors)
    }
    ServerDirectory.objects.create(
        server_id=lantern.pk,
        channels=[
            {"id": HALL, "name": "hall", "parent": None, "private": False},
            {"id": OFFICERS, "name": "officers", "parent": None, "private": False},
            # pushed before memory carried pushes onto its rows: only the directory knows these
            {"id": CELLAR, "name": "cellar", "parent": None, "private": True},
            {"id": VAULT, "name": "vault", "parent": CELLAR, "private": False},
            {"id": DM, "name": "not-a-dm", "parent": None, "private": False},
        ],
        members=[{"id": 42, "display_name": "Mira"}],
    )
    # Stored conversations recorded their thread's parent: #quests under #board, which no other
    # record knew; #plans under #hall, where memory's row says #officers.
    ChannelConversation = old.get_model("conversations", "ChannelConversation")
    ChannelConversation.objects.create(server_id=lantern.pk, channel_id=QUESTS, parent_id=BOARD)
    ChannelConversation.objects.create(server_id=lantern.pk, channel_id=PLANS, parent_id=HALL)

    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    from conversations.channels import selectors as conversations
    from memory.models import StmEntry as Entry
    from servers import selectors
    from servers.models import Channel as Current

    rows = {(c.owner_id, c.discord_id): c for c in Current.objects.select_related("parent")}
    assert rows[lantern.pk, HALL].pk == hall.pk and rows[lantern.pk, HALL].name == "hall"
    assert rows[lantern.pk, OFFICERS].is_private  # the admin's choice, not the older push
    assert present(rows[lantern.pk, PLANS].parent).discord_id == OFFICERS
    assert rows[lantern.pk, DM].is_dm and rows[lantern.pk, DM].name == ""
    assert not rows[harbor.pk, OFFICERS].is_private and rows[harbor.pk, OFFICERS].name == "o"
    assert rows[lantern.pk, CELLAR].is_private and rows[lantern.pk, CELLAR].name == "cellar"
    assert present(rows[lantern.pk, VAULT].parent).discord_id == CELLAR
    for channel_pk, entry_pk in entries.items():
        assert Entry.objects.get(pk=entry_pk).channel_id == channel_pk
    # The directory still names what the bot pushed, and only that; the DM stays a DM.
    assert selectors.directory_names(lantern.pk).channels == {
        HALL: "hall",
        OFFICERS: "officers",
        CELLAR: "cellar",
        VAULT: "vault",
    }
    assert selectors.directory_names(lantern.pk).members == {42: "Mira"}
    # A thread's parent is the channel table's: the conversation's assembly and pages read it there.
    assert present(conversations.stored_chat(lantern.pk, QUESTS)).parent_id == BOARD
    assert present(conversations.stored_chat(lantern.pk, PLANS)).parent_id == OFFICERS
    assert rows[lantern.pk, QUESTS].name == "" and not rows[lantern.pk, QUESTS].listed
    # A channel stored now gets an id after the copied ones.
    fresh = Current.objects.create(owner_id=lantern.pk, server_id=lantern.pk, discord_id=999)
    assert fresh.pk > max(entries)
