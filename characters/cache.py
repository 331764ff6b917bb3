"""The active character card per server, from the shared cache: a warm assembly reads no table.

Plain data, read in one round trip: a generation token (`cards:v1:gen:<server>`, replaced by every
change once its transaction commits) and the card stored under the generation it was loaded for
(`cards:v1:active:<server>` = `(generation, Card.to_dict() | None)`; "no active card" is cached too).
A reader that loaded the database just before a change stores its entry under the old generation,
so it cannot put an outdated card back. A stale copy (one day) is served only when the database
errors. Cache-backend errors are misses, and the database answers.
"""

from __future__ import annotations

import logging
import secrets

from django.db import DatabaseError

from engine.cards import Card
from presets.cache import GENERATION_SECONDS, STALE_SECONDS, ttl_seconds
from servers.resilient_cache import cache_delete, cache_get, cache_get_many, cache_set

from . import selectors

log = logging.getLogger("tavernkeep.characters")


def _key(server_id: int) -> str:
    return f"cards:v1:active:{server_id}"


def _generation_key(server_id: int) -> str:
    return f"cards:v1:gen:{server_id}"


def _stale_key(server_id: int) -> str:
    return f"cards:v1:stale:{server_id}"


def get_active_card(server_id: int) -> Card | None:
    """The server's active card, or None when it has none."""
    key, generation_key = _key(server_id), _generation_key(server_id)
    found = cache_get_many([generation_key, key])
    generation, entry = found.get(generation_key), found.get(key)
    if generation is not None:
        if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == generation:
            return None if entry[1] is None else Card.from_dict(entry[1])
    else:
        generation = _new_generation(server_id)
    try:
        row = selectors.active_card_row(server_id)
    except DatabaseError:
        stale = cache_get(_stale_key(server_id))
        log.warning("database error: serving the %s card of server %s", "stale" if stale else "no", server_id)
        return Card.from_dict(stale) if isinstance(stale, dict) else None
    data = None if row is None else row.fields
    cache_set(key, (generation, data), ttl_seconds())
    cache_set(_stale_key(server_id), data, STALE_SECONDS)
    return None if data is None else Card.from_dict(data)


def invalidate(server_id: int) -> None:
    """Forget the cached card in every process; the next read loads the database."""
    _new_generation(server_id)
    cache_delete(_key(server_id))


def _new_generation(server_id: int) -> str:
    generation = secrets.token_hex(8)
    cache_set(_generation_key(server_id), generation, GENERATION_SECONDS)
    return generation
