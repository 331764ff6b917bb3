"""The server's sampling choice, cached beside the active preset so an assemble request stays free of SQL.

Plain data in the shared cache, read in one round trip: a generation token (`sampling:v1:gen:<server>`,
replaced by every change once its transaction commits) and the choice stored under the generation it
was loaded for (`sampling:v1:<server>` = `(generation, dict)`, same TTL as the preset cache; the
default is cached too). A reader that loaded the database just before a change stores its entry under
the old generation, so it cannot put an outdated choice back. A stale copy (one day) is served only
when the database errors; without one, the default (the preset's sampling) is used.
"""

from __future__ import annotations

import logging
import secrets

from django.db import DatabaseError

from engine.sampling import SamplingChoice
from servers.resilient_cache import cache_delete, cache_get, cache_get_many, cache_set

from . import sampling_selectors
from .cache import GENERATION_SECONDS, STALE_SECONDS, ttl_seconds

log = logging.getLogger("tavernkeep.presets")


def _key(server_id: int) -> str:
    return f"sampling:v1:{server_id}"


def _generation_key(server_id: int) -> str:
    return f"sampling:v1:gen:{server_id}"


def _stale_key(server_id: int) -> str:
    return f"sampling:v1:stale:{server_id}"


def get_sampling_choice(server_id: int) -> SamplingChoice:
    """The server's sampling choice: from the cache when it holds a current one, else the database
    (then cached)."""
    key, generation_key = _key(server_id), _generation_key(server_id)
    found = cache_get_many([generation_key, key])
    generation, entry = found.get(generation_key), found.get(key)
    if generation is not None:
        if (
            isinstance(entry, tuple)
            and len(entry) == 2
            and entry[0] == generation
            and isinstance(entry[1], dict)
        ):
            return SamplingChoice.from_dict(entry[1])
    else:
        generation = _new_generation(server_id)
    try:
        choice = sampling_selectors.sampling_choice(server_id)
    except DatabaseError:
        stale = cache_get(_stale_key(server_id))
        which = "stale" if isinstance(stale, dict) else "default"
        log.warning("database error: using the %s sampling choice of server %s", which, server_id)
        return SamplingChoice.from_dict(stale) if isinstance(stale, dict) else SamplingChoice()
    cache_set(key, (generation, choice.to_dict()), ttl_seconds())
    cache_set(_stale_key(server_id), choice.to_dict(), STALE_SECONDS)
    return choice


def invalidate(server_id: int) -> None:
    """Forget the cached choice in every process; the next read loads the database."""
    _new_generation(server_id)
    cache_delete(_key(server_id))


def _new_generation(server_id: int) -> str:
    generation = secrets.token_hex(8)
    cache_set(_generation_key(server_id), generation, GENERATION_SECONDS)
    return generation
