"""The server's sampling choice, cached beside the active preset so an assemble request stays free of SQL.

Plain data in the shared cache (`sampling:v1:<server>`, a dict, same TTL as the preset cache), the
default cached too; a change deletes the key once its transaction commits. A stale copy (one day) is
served only when the database errors; without one, the default (the preset's sampling) is used.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError

from engine.sampling import SamplingChoice
from servers.resilient_cache import cache_delete, cache_get, cache_set

from . import sampling_selectors
from .cache import STALE_SECONDS, ttl_seconds

log = logging.getLogger("tavernkeep.presets")


def _key(server_id: int) -> str:
    return f"sampling:v1:{server_id}"


def _stale_key(server_id: int) -> str:
    return f"sampling:v1:stale:{server_id}"


def get_sampling_choice(server_id: int) -> SamplingChoice:
    """The server's sampling choice: from the cache when it holds it, else the database (then cached)."""
    entry = cache_get(_key(server_id))
    if isinstance(entry, dict):
        return SamplingChoice.from_dict(entry)
    try:
        choice = sampling_selectors.sampling_choice(server_id)
    except DatabaseError:
        stale = cache_get(_stale_key(server_id))
        log.warning(
            "database error: using the %s sampling choice of server %s",
            "stale" if stale else "default",
            server_id,
        )
        return SamplingChoice.from_dict(stale) if isinstance(stale, dict) else SamplingChoice()
    cache_set(_key(server_id), choice.to_dict(), ttl_seconds())
    cache_set(_stale_key(server_id), choice.to_dict(), STALE_SECONDS)
    return choice


def invalidate(server_id: int) -> None:
    """Forget the cached choice; the next read loads the database."""
    cache_delete(_key(server_id))
