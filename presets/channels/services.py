"""Presets per channel, written: an admin may give a channel (or a thread) its own preset, which
wins over the server's active one there; a thread without its own inherits its parent channel's.

Writes lock the server row like activation does, record an audit entry and bump the presets' cache
stamp inside their transaction (servers.writes.server_write; presets.channels.cache reads them).
"""

from __future__ import annotations

from core.actors import Actor, user_of
from core.errors import UserError
from servers.audit_actions import AuditAction
from servers.models import AuditEvent, Server
from servers.writes import server_write

from .. import cache as preset_cache
from ..models import ChannelPreset, Preset

MAX_CHANNEL_ID = 2**63 - 1


class ChannelPresetRefused(UserError, ValueError):
    """A channel's preset that cannot be set as asked; `message` is one sentence for the user."""


def channel_preset_set(*, server: Server, channel_id: int, preset: Preset | None, by: Actor) -> bool:
    """Give `channel_id` its own preset, or clear it with None. Returns whether anything changed."""
    if not 0 < channel_id <= MAX_CHANNEL_ID:
        raise ChannelPresetRefused("A channel id is a positive Discord snowflake.")
    with server_write(server_id=server.pk, lock=True) as write:
        current = ChannelPreset.objects.filter(server=server, channel_id=channel_id).first()
        if preset is None:
            if current is None:
                return False
            current.delete()
            action, detail = AuditAction.PRESET_CHANNEL_CLEAR, {"channel": str(channel_id)}
        else:
            if current is not None and current.preset_id == preset.pk:
                return False
            ChannelPreset.objects.update_or_create(
                server=server,
                channel_id=channel_id,
                defaults={"preset": preset, "set_by": user_of(by)},
            )
            action, detail = (
                AuditAction.PRESET_CHANNEL_SET,
                {"channel": str(channel_id), "preset": preset.name},
            )
        AuditEvent.record(server=server, actor=by, action=action, target=preset, detail=detail)
        write.touch(preset_cache.STAMP)  # a channel left as it was bumps nothing
    return True
