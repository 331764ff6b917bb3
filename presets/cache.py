"""The active-preset cache (SPEC §4): the compiled preset per server, so requests only evaluate macros.

Layout, per server:
- `presets:v1:gen:<server>`: a generation token, replaced on every invalidation;
- `presets:v1:active:<server>`: `(generation, CompiledPreset | None)`, with the settings' TTL. The
  entry counts only when its generation matches the current one, so a reader that loaded the
  database just before a write cannot put an outdated preset back after the invalidation;
- `presets:v1:stale:<server>`: the last loaded value, kept for a day and served only when the
  database errors. Invalidation leaves it: an outdated preset beats no answer during an outage.
A hit is one cache round trip and no SQL. Cache-backend errors are misses (servers.resilient_cache).
"""

from __future__ import annotations

import logging
import secrets

from django.conf import settings
from django.db import DatabaseError

from servers.resilient_cache import cache_delete, cache_get, cache_get_many, cache_set

from . import selectors
from .compiled import CompiledPreset, compile_preset
from .models import Preset

log = logging.getLogger("tavernkeep.presets")

STALE_SECONDS = 24 * 60 * 60
GENERATION_SECONDS = 30 * 24 * 60 * 60


def _active_key(server_id: int) -> str:
    return f"presets:v1:active:{server_id}"


def _stale_key(server_id: int) -> str:
    return f"presets:v1:stale:{server_id}"


def _generation_key(server_id: int) -> str:
    return f"presets:v1:gen:{server_id}"


def ttl_seconds() -> int:
    return max(1, int(settings.ST_PRESET_CACHE_TTL_MINUTES * 60))


def get_active_preset(server_id: int) -> CompiledPreset | None:
    """The server's active preset, compiled; None when no preset is active (native assembly).

    Served from the cache when possible; loaded from the database and cached otherwise. When the
    database errors, the stale copy is served if there is one (else the error propagates).
    """
    active_key, generation_key = _active_key(server_id), _generation_key(server_id)
    found = cache_get_many([active_key, generation_key])
    generation = found.get(generation_key)
    entry = found.get(active_key)
    if generation is not None and isinstance(entry, tuple) and len(entry) == 2 and entry[0] == generation:
        return entry[1]
    if generation is None:
        generation = _new_generation(server_id)
    try:
        compiled = _load_active(server_id)
    except DatabaseError:
        stale = cache_get(_stale_key(server_id))
        if isinstance(stale, tuple) and len(stale) == 2:
            log.warning("database error: serving the stale active preset of server %s", server_id)
            return stale[1]
        raise
    cache_set(active_key, (generation, compiled), ttl_seconds())
    cache_set(_stale_key(server_id), (generation, compiled), STALE_SECONDS)
    return compiled


def get_preset(preset_id: int) -> CompiledPreset:
    """Any stored preset, compiled (for the preview of a non-active preset); not cached.

    Raises Preset.DoesNotExist when there is no such preset.
    """
    preset = Preset.objects.defer("stored_text").get(pk=preset_id)
    return _compile(preset)


def invalidate(server_id: int) -> None:
    """Forget the server's cached active preset; the next read loads it from the database."""
    _new_generation(server_id)
    cache_delete(_active_key(server_id))


def _new_generation(server_id: int) -> str:
    generation = secrets.token_hex(8)
    cache_set(_generation_key(server_id), generation, GENERATION_SECONDS)
    return generation


def _load_active(server_id: int) -> CompiledPreset | None:
    preset = selectors.active_preset_row(server_id)
    return None if preset is None else _compile(preset)


def _compile(preset: Preset) -> CompiledPreset:
    return compile_preset(
        preset_id=preset.pk,
        name=preset.name,
        injection_style=preset.injection_style,
        settings=selectors.prompt_settings(preset),
        nodes=selectors.st_nodes(preset.pk),
    )
