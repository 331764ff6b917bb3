"""Reads for character cards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import Subquery
from django.db.models.functions import Length

from core.hooks import Hook
from engine.cards import Card
from servers.models import Server

from .avatars import avatar_path as avatar_path  # the public avatar URL (docs/groups.md#avatars)
from .models import Card as CardRow


def cards_for(server: Server | int) -> list[CardRow]:
    server_id = server if isinstance(server, int) else server.pk
    return list(CardRow.objects.filter(server_id=server_id).defer("original", "avatar"))


def card_of(server: Server, card_id: int) -> CardRow | None:
    return CardRow.objects.filter(server=server, pk=card_id).first()


def active_card_row(server_id: int) -> CardRow | None:
    return CardRow.objects.filter(server_id=server_id, is_active=True).defer("original", "avatar").first()


def card_data(row: CardRow) -> Card:
    return Card.from_dict(row.fields)


def cards_named(server_id: int, names: list[str]) -> dict[str, CardRow]:
    """The server's cards whose names are in `names`, by name (a name not found is absent)."""
    rows = CardRow.objects.filter(server_id=server_id, name__in=names).defer("original", "avatar")
    return {row.name: row for row in rows}


def cards_by_id(server_id: int, ids: list[int]) -> dict[int, CardRow]:
    """The server's cards with these ids, by id (an id not found is absent)."""
    rows = CardRow.objects.filter(server_id=server_id, pk__in=ids).defer("original", "avatar")
    return {row.pk: row for row in rows}


def card_ids_with_avatar(server_id: int) -> set[int]:
    """The ids of the server's cards that came with an image."""
    return set(CardRow.objects.filter(server_id=server_id, avatar__isnull=False).values_list("pk", flat=True))


# What the apps above hold of a card, in words (the groups it is a member of), for the card's delete
# confirmation and the message after it: each entry gets (server id, card id) and answers "" when
# it holds nothing of that card.
CARD_USES: Hook[Callable[[int, int], str]] = Hook("characters.selectors.CARD_USES")


def card_uses(server_id: int, card_id: int) -> list[str]:
    """What the apps above hold of the card, each in words ("the group “Party”")."""
    return [words for use in CARD_USES if (words := use(server_id, card_id))]


def active_card_size(server: Any) -> Subquery:
    """Characters of the server's active card as uploaded, as an expression for a query over the
    servers (`server`: an OuterRef to the server's id); NULL when none is active."""
    active = CardRow.objects.filter(server_id=server, is_active=True)
    return Subquery(active.annotate(size=Length("original")).values("size")[:1])
