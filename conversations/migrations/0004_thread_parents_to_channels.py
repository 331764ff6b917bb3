"""A stored conversation's thread parent moves to servers' channel rows, where a channel's parent is
kept once (servers 0013–0015): each conversation whose channel row has no parent yet gives it the
parent it recorded; a row is made for a channel no row held. A channel the server stored as a DM
keeps no parent (conversations are never DMs; the bot's records disagree, and the row wins).
0005 then drops the column."""

from django.db import migrations
from django.db.models import F


def parents_to_channels(apps, schema_editor):
    ChannelConversation = apps.get_model("conversations", "ChannelConversation")
    Channel = apps.get_model("servers", "Channel")
    rows = ChannelConversation.objects.exclude(parent_id=None).exclude(parent_id=F("channel_id"))
    for server_id, channel_id, parent_id in rows.order_by("id").values_list("server_id", "channel_id", "parent_id"):
        channel, _ = Channel.objects.get_or_create(
            owner_id=server_id, discord_id=channel_id, defaults={"server_id": server_id}
        )
        if channel.server_id is None or channel.parent_id is not None:
            continue
        parent, _ = Channel.objects.get_or_create(
            owner_id=server_id, discord_id=parent_id, defaults={"server_id": server_id}
        )
        if parent.server_id is not None:
            Channel.objects.filter(pk=channel.pk).update(parent_id=parent.pk)


def parents_back(apps, schema_editor):
    ChannelConversation = apps.get_model("conversations", "ChannelConversation")
    Channel = apps.get_model("servers", "Channel")
    for conversation in ChannelConversation.objects.all():
        parent = (
            Channel.objects.filter(owner_id=conversation.server_id, discord_id=conversation.channel_id)
            .values_list("parent__discord_id", flat=True)
            .first()
        )
        if parent is not None:
            ChannelConversation.objects.filter(pk=conversation.pk).update(parent_id=parent)


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0003_channel_private_context"),
        ("servers", "0015_directory_without_channels"),
    ]

    operations = [
        migrations.RunPython(parents_to_channels, parents_back),
    ]
