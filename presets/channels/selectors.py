"""Presets per channel, read: the channels with their own preset, and the channels and threads the
bot has reported, for the presets page and the command line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servers import selectors as server_selectors
from servers.models import Server

from ..models import ChannelPreset


@dataclass(frozen=True, slots=True)
class ChannelUse:
    """One channel with its own preset, for the presets list."""

    channel_id: int
    channel_name: str
    preset_id: int
    preset_name: str
    parent_id: int | None


def channel_uses(server: Server) -> list[ChannelUse]:
    """Every channel of the server with its own preset, with channel names the bot has reported."""
    rows = list(ChannelPreset.objects.filter(server=server).select_related("preset").order_by("channel_id"))
    known = server_selectors.channels_by_id(server.pk, [row.channel_id for row in rows])
    return [
        ChannelUse(
            channel_id=row.channel_id,
            channel_name=str(known[row.channel_id])
            if row.channel_id in known
            else f"channel {row.channel_id}",
            preset_id=row.preset_id,
            preset_name=row.preset.name,
            parent_id=_parent_discord_id(known[row.channel_id]) if row.channel_id in known else None,
        )
        for row in rows
    ]


def known_channels(server: Server) -> list[tuple[int, str]]:
    """The server's channels the bot has reported, for the channel picker: (id, label), each
    channel by name followed by its threads, indented under it. Once the bot has pushed a directory,
    only the channels of its latest push: a channel deleted in Discord leaves the picker."""
    rows = server_selectors.channels_for(server)
    pushed = server_selectors.directory_names(server.pk).channels
    if pushed:
        rows = [row for row in rows if row.discord_id in pushed]
    known = {row.pk for row in rows}
    threads: dict[int, list[Any]] = {}
    for row in rows:
        if row.parent_id in known:
            threads.setdefault(row.parent_id, []).append(row)
    choices = []
    for row in rows:
        if row.parent_id in known:
            continue
        choices.append((row.discord_id, f"#{row.name}" if row.name else f"channel {row.discord_id}"))
        for thread in threads.get(row.pk, []):
            label = f"#{thread.name}" if thread.name else f"thread {thread.discord_id}"
            choices.append((thread.discord_id, f"\u00a0\u00a0\u21b3 {label} (thread)"))
    return choices


def _parent_discord_id(channel: Any) -> int | None:
    return channel.parent.discord_id if channel.parent_id else None


def thread_parent(server_id: int, channel_id: int) -> int | None:
    """The parent channel of a thread the bot has reported, else None (the command line asks)."""
    return server_selectors.channel_parent(server_id, channel_id)
