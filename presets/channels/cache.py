"""Per-channel presets, cached like the active one (docs/presets.md): a request that names a channel (and,
for a thread, its parent) gets that channel's preset, else its parent's, else the server's active one.

Two `servers.generational_cache` declarations riding the active preset's stamp (`presets`): every
preset write on a server (channel choices included) bumps it, so these entries go stale together.
One holds the server's channel map, the other each channel preset's plain data (compiled per
process). A warm hit is one small cache read (the generation) and no SQL. During a database outage
the process's last copies, else the day-long stale copies, are served.
"""

from __future__ import annotations

from engine import CompiledPreset
from servers.generational_cache import GenerationalCache

from .. import cache as active_cache
from ..models import ChannelPreset, Preset

LOCAL_ENTRIES = 64


def _load_map(server_id: int) -> dict[int, int]:
    return dict(ChannelPreset.objects.filter(server_id=server_id).values_list("channel_id", "preset_id"))


def _load_preset(key: tuple[int, int]) -> active_cache.StoredPreset | None:
    server_id, preset_id = key
    row = Preset.objects.defer("stored_text").filter(pk=preset_id, server_id=server_id).first()
    return None if row is None else active_cache.stored(row)


MAPS: GenerationalCache[int, dict[int, int], dict[int, int]] = GenerationalCache(
    name="presets:channels",
    stamp="presets",
    load=_load_map,
    local_entries=LOCAL_ENTRIES,
    valid=lambda plain: isinstance(plain, dict),
)
PRESETS: GenerationalCache[tuple[int, int], active_cache.StoredPreset | None, CompiledPreset | None] = (
    GenerationalCache(
        name="presets:channel",
        stamp="presets",
        load=_load_preset,
        compile=active_cache.compile_stored,
        server_of=lambda key: key[0],
        local_entries=LOCAL_ENTRIES,
        valid=lambda plain: plain is None or isinstance(plain, active_cache.StoredPreset),
    )
)


def get_preset_for_channel(
    server_id: int, channel: int, parent_channel: int | None = None
) -> CompiledPreset | None:
    """The preset for a request in `channel` (a thread inherits its parent's), else the server's
    active preset; None means native assembly."""
    mapping = MAPS.get(server_id)
    preset_id = mapping.get(channel)
    if preset_id is None and parent_channel is not None:
        preset_id = mapping.get(parent_channel)
    if preset_id is None:
        return active_cache.get_active_preset(server_id)
    compiled = PRESETS.get((server_id, preset_id))
    if compiled is None:  # deleted since the map was read: the server's active preset answers
        return active_cache.get_active_preset(server_id)
    return compiled


def clear_local() -> None:
    """Drop this process's channel maps and compiled channel presets (tests call it between cases)."""
    MAPS.clear_local()
    PRESETS.clear_local()
