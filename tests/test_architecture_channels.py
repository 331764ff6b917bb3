"""A Discord channel is stored once (docs/architecture.md, "Channels"): servers' `Channel` holds a
channel's own facts — its name, its parent, whether it is private, whether the bot's directory lists
it — and every other table names a channel by its Discord id (or a foreign key to that row) and asks
servers.selectors for the rest. A second table of channel facts would drift from the first: that is
how memory's channel rows and the pushed directory came to disagree about a channel's privacy."""

from __future__ import annotations

from collections.abc import Iterable

from django.apps import apps
from django.db import models
from django.test.utils import isolate_apps

THE_CHANNEL_TABLE = "servers.Channel"
# What only the channel table may say about a channel.
CHANNEL_FACTS = frozenset({"name", "parent", "parent_id", "is_private", "private", "listed"})


def _channel_keyed(model: type[models.Model]) -> bool:
    """Whether the model's rows are channels: a plain Discord-id column called `channel_id`, or a
    `discord_id` column on a model named after channels."""
    for field in model._meta.concrete_fields:
        if field.is_relation:
            continue
        if field.name == "channel_id" or (field.name == "discord_id" and model.__name__ == "Channel"):
            return True
    return False


def channel_tables(candidates: Iterable[type[models.Model]]) -> list[str]:
    """Every model but servers' Channel that stores a channel's own facts (a channel-keyed row with a
    name, parent or privacy column) or a list of channels (a JSON column `channels`)."""
    found = []
    for model in candidates:
        if model._meta.label == THE_CHANNEL_TABLE:
            continue
        columns = {field.name for field in model._meta.concrete_fields} | {
            field.attname for field in model._meta.concrete_fields
        }
        facts = sorted(columns & CHANNEL_FACTS) if _channel_keyed(model) else []
        lists = [
            f.name
            for f in model._meta.concrete_fields
            if f.name == "channels" and isinstance(f, models.JSONField)
        ]
        if facts or lists:
            found.append(f"{model._meta.label}: {', '.join(facts + lists)}")
    return sorted(found)


def test_only_servers_channel_table_stores_what_a_channel_is():
    assert apps.get_model(THE_CHANNEL_TABLE) is not None
    found = channel_tables(apps.get_models())
    assert found == [], (
        "a second table of channel facts (read them through servers.selectors):\n" + "\n".join(found)
    )


@isolate_apps("tests")
def test_the_channel_table_check_catches_what_bob_plants():
    class Channel(models.Model):  # a second channel table, the way memory had one
        discord_id = models.BigIntegerField()
        is_private = models.BooleanField(default=False)

        class Meta:
            app_label = "tests"

    class ChannelNotes(models.Model):  # channel-keyed, and keeps the thread's parent again
        channel_id = models.BigIntegerField()
        parent_id = models.BigIntegerField(null=True)

        class Meta:
            app_label = "tests"

    class Directory(models.Model):  # a pushed list of channels beside the rows
        channels = models.JSONField(default=list)

        class Meta:
            app_label = "tests"

    class ChannelPin(models.Model):  # names a channel by id and keeps only its own text: allowed
        channel_id = models.BigIntegerField()
        text = models.TextField()

        class Meta:
            app_label = "tests"

    class Entry(models.Model):  # points at the one table: allowed
        channel = models.ForeignKey("servers.Channel", on_delete=models.CASCADE)

        class Meta:
            app_label = "tests"

    assert channel_tables([Channel, ChannelNotes, Directory, ChannelPin, Entry]) == [
        "tests.Channel: is_private",
        "tests.ChannelNotes: parent_id",
        "tests.Directory: channels",
    ]
