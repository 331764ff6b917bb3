"""The active character card per server, from the shared cache: a warm assembly reads no table.

A `servers.generational_cache` declaration (stamp `cards`): the card is kept as plain data
(`Card.to_dict()`, or None — "no active card" is cached too). During a database outage the day-long
stale copy is served, else no card.
"""

from __future__ import annotations

from typing import Any

from engine.cards import Card
from servers.generational_cache import GenerationalCache

from . import selectors


def _load(server_id: int) -> dict[str, Any] | None:
    row = selectors.active_card_row(server_id)
    return None if row is None else row.fields


def _compile(data: dict[str, Any] | None) -> Card | None:
    return None if data is None else Card.from_dict(data)


ACTIVE: GenerationalCache[int, dict[str, Any] | None, Card | None] = GenerationalCache(
    name="cards:active",
    stamp="cards",
    load=_load,
    compile=_compile,
    outage=lambda: None,
    valid=lambda plain: plain is None or isinstance(plain, dict),
)


def get_active_card(server_id: int) -> Card | None:
    """The server's active card, or None when it has none."""
    return ACTIVE.get(server_id)


# What a write bumps (servers.writes.server_write) so that every process reloads the server's card
# (and its groups, which ride the same stamp).
STAMP = ACTIVE.stamp
