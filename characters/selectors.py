"""Reads for character cards."""

from __future__ import annotations

from engine.cards import Card
from servers.models import Server

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
