"""Per-channel presets, cached like the active one (SPEC §4): a request that names a channel (and,
for a thread, its parent) gets that channel's preset, else its parent's, else the server's active one.

It rides on the active-preset cache's generation token: every preset write on a server (channel
choices included) replaces the token, so these entries go stale together. The shared cache holds
the server's channel map (`presets:v1:channels:<server>`) and each channel preset's plain data
(`presets:v1:preset:<server>:<preset>`), both under the generation they were read at; each process
keeps the map and the compiled presets for that generation. A warm hit is one small cache read
(the generation) and no SQL. During a database outage the process's last copies are served.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict

from django.db import DatabaseError

from engine.compiled import CompiledPreset
from servers.resilient_cache import cache_get, cache_set

from . import cache as active_cache
from .models import ChannelPreset, Preset

log = logging.getLogger("tavernkeep.presets")

LOCAL_ENTRIES = 64

_maps: OrderedDict[int, tuple[str, dict[int, int], float]] = OrderedDict()
_compiled: OrderedDict[tuple[int, int], tuple[str, CompiledPreset, float]] = OrderedDict()
_lock = threading.Lock()


def _map_key(server_id: int) -> str:
    return f"presets:v1:channels:{server_id}"


def _preset_key(server_id: int, preset_id: int) -> str:
    return f"presets:v1:preset:{server_id}:{preset_id}"


def get_preset_for_channel(
    server_id: int, channel: int, parent_channel: int | None = None
) -> CompiledPreset | None:
    """The preset for a request in `channel` (a thread inherits its parent's), else the server's
    active preset; None means native assembly."""
    generation = cache_get(active_cache._generation_key(server_id))
    if generation is None:
        generation = active_cache._new_generation(server_id)
    try:
        mapping = _channel_map(server_id, generation)
    except DatabaseError as exc:
        mapping = _last_map(server_id, exc)
    preset_id = mapping.get(channel)
    if preset_id is None and parent_channel is not None:
        preset_id = mapping.get(parent_channel)
    if preset_id is None:
        return active_cache.get_active_preset(server_id)
    return _channel_preset(server_id, preset_id, generation)


def clear_local() -> None:
    """Drop this process's channel maps and compiled channel presets (tests call it between cases)."""
    with _lock:
        _maps.clear()
        _compiled.clear()


def _channel_map(server_id: int, generation: str) -> dict[int, int]:
    now = time.monotonic()
    with _lock:
        local = _maps.get(server_id)
    if local is not None and local[0] == generation and local[2] > now:
        return local[1]
    entry = cache_get(_map_key(server_id))
    if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == generation:
        mapping = entry[1]
    else:
        mapping = dict(
            ChannelPreset.objects.filter(server_id=server_id).values_list("channel_id", "preset_id")
        )
        cache_set(_map_key(server_id), (generation, mapping), active_cache.ttl_seconds())
    _remember(_maps, server_id, (generation, mapping, now + active_cache.ttl_seconds()))
    return mapping


def _channel_preset(server_id: int, preset_id: int, generation: str) -> CompiledPreset | None:
    now = time.monotonic()
    key = (server_id, preset_id)
    with _lock:
        local = _compiled.get(key)
    if local is not None and local[0] == generation and local[2] > now:
        return local[1]
    entry = cache_get(_preset_key(server_id, preset_id))
    if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == generation:
        stored = entry[1]
    else:
        try:
            row = Preset.objects.defer("stored_text").filter(pk=preset_id, server_id=server_id).first()
        except DatabaseError as exc:
            if local is not None:
                log.warning("database error: serving this process's last copy of preset %s", preset_id)
                return local[1]
            raise exc
        if row is None:  # deleted since the map was read: the server's active preset answers
            return active_cache.get_active_preset(server_id)
        stored = active_cache._stored(row)
        cache_set(_preset_key(server_id, preset_id), (generation, stored), active_cache.ttl_seconds())
    compiled = active_cache._compile(stored)
    _remember(_compiled, key, (generation, compiled, now + active_cache.ttl_seconds()))
    return compiled


def _last_map(server_id: int, error: DatabaseError) -> dict[int, int]:
    with _lock:
        local = _maps.get(server_id)
    if local is None:
        raise error
    log.warning("database error: serving this process's last channel presets of server %s", server_id)
    return local[1]


def _remember(store: OrderedDict, key: object, value: tuple) -> None:
    with _lock:
        store[key] = value
        store.move_to_end(key)
        while len(store) > LOCAL_ENTRIES:
            store.popitem(last=False)
