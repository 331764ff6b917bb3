"""The active character card per server, from the shared cache: a warm assembly reads no table.

The cache holds the card as plain data (`Card.to_dict()`, or None for "no active card") under a key
that every write deletes on commit; a cache-backend error is a miss and the database answers.
"""

from __future__ import annotations

from django.conf import settings

from engine.cards import Card
from servers.resilient_cache import cache_delete, cache_get, cache_set

from . import selectors

_MISSING = object()


def _key(server_id: int) -> str:
    return f"cards:v1:active:{server_id}"


def get_active_card(server_id: int) -> Card | None:
    """The server's active card, or None when it has none."""
    cached = cache_get(_key(server_id), _MISSING)
    if cached is not _MISSING:
        return None if cached is None else Card.from_dict(cached)
    row = selectors.active_card_row(server_id)
    data = None if row is None else row.fields
    cache_set(_key(server_id), data, settings.ST_PRESET_CACHE_TTL_MINUTES * 60)
    return None if data is None else Card.from_dict(data)


def invalidate(server_id: int) -> None:
    cache_delete(_key(server_id))
