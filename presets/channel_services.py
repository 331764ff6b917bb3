"""Presets per channel: an admin may give a channel (or a thread) its own preset, which wins over
the server's active one there; a thread without its own inherits its parent channel's.

Writes lock the server row like activation does, record an audit entry and invalidate the server's
preset cache on commit (presets.channel_cache reads them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from memory import selectors as memory_selectors  # names and parents; memory does not depend on presets
from servers.imports import lock_server
from servers.models import AuditEvent, Server
from servers.users import User

from . import cache as preset_cache
from .models import ChannelPreset, Preset

MAX_CHANNEL_ID = 2**63 - 1


@dataclass(frozen=True, slots=True)
class ChannelUse:
    """One channel with its own preset, for the presets list."""

    channel_id: int
    channel_name: str
    preset_id: int
    preset_name: str
    parent_id: int | None


def channel_preset_set(
    *, server: Server, channel_id: int, preset: Preset | None, by: User | None, actor_label: str = ""
) -> bool:
    """Give `channel_id` its own preset, or clear it with None. Returns whether anything changed."""
    if not 0 < channel_id <= MAX_CHANNEL_ID:
        raise ValueError("A channel id is a positive Discord snowflake.")
    with transaction.atomic():
        lock_server(server.pk)
        current = ChannelPreset.objects.filter(server=server, channel_id=channel_id).first()
        if preset is None:
            if current is None:
                return False
            current.delete()
            action, detail = "preset.channel.clear", {"channel": str(channel_id)}
        else:
            if current is not None and current.preset_id == preset.pk:
                return False
            ChannelPreset.objects.update_or_create(
                server=server,
                channel_id=channel_id,
                defaults={"preset": preset, "set_by": by if getattr(by, "is_authenticated", False) else None},
            )
            action, detail = "preset.channel.set", {"channel": str(channel_id), "preset": preset.name}
        AuditEvent.record(
            server=server, actor=by, actor_label=actor_label, action=action, target=preset, detail=detail
        )
    preset_cache.invalidate(server.pk)
    return True


def channel_uses(server: Server) -> list[ChannelUse]:
    """Every channel of the server with its own preset, with channel names the bot has reported."""
    rows = list(ChannelPreset.objects.filter(server=server).select_related("preset").order_by("channel_id"))
    known = memory_selectors.channels_by_id([row.channel_id for row in rows])
    return [
        ChannelUse(
            channel_id=row.channel_id,
            channel_name=str(known[row.channel_id])
            if row.channel_id in known
            else f"channel {row.channel_id}",
            preset_id=row.preset_id,
            preset_name=row.preset.name,
            parent_id=known[row.channel_id].parent_id if row.channel_id in known else None,
        )
        for row in rows
    ]


def known_channels(server: Server) -> list[tuple[int, str]]:
    """The server's channels the bot has reported, for the channel picker: (id, label), each
    channel by name followed by its threads, indented under it."""
    rows = memory_selectors.channels_for(server)
    known = {row.id for row in rows}
    threads: dict[int, list[Any]] = {}
    for row in rows:
        if row.parent_id in known:
            threads.setdefault(row.parent_id, []).append(row)
    choices = []
    for row in rows:
        if row.parent_id in known:
            continue
        choices.append((row.id, f"#{row.name}" if row.name else f"channel {row.id}"))
        for thread in threads.get(row.id, []):
            label = f"#{thread.name}" if thread.name else f"thread {thread.id}"
            choices.append((thread.id, f"\u00a0\u00a0\u21b3 {label} (thread)"))
    return choices


def thread_parent(channel_id: int) -> int | None:
    """The parent channel of a thread the bot has reported, else None (the command line asks)."""
    return memory_selectors.channel_parent(channel_id)
