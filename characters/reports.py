"""Cards as JSON: the shapes the bot API and the `card` command answer with."""

from __future__ import annotations

from typing import Any, TypedDict

from engine.cards import Card

from .models import Card as CardRow
from .services import CardImportResult


class CardImportJson(TypedDict):
    name: str
    spec: str
    fields: list[str]
    lorebook: dict[str, int] | None
    warnings: list[str]
    card_id: int
    active: bool
    replaced: bool


class CardListingJson(TypedDict):
    card_id: int
    name: str
    spec: str
    active: bool


def import_report(result: CardImportResult) -> CardImportJson:
    """What an import stored (the `card import --json` contract)."""
    return {
        "name": result.row.name,
        "spec": result.card.spec,
        "fields": result.card.filled_fields(),
        "lorebook": None if result.lorebook_entries is None else {"entries": result.lorebook_entries},
        "warnings": list(result.read.warnings),
        "card_id": result.row.pk,
        "active": result.row.is_active,
        "replaced": result.replaced,
    }


def card_listing(row: CardRow) -> CardListingJson:
    return {"card_id": row.pk, "name": row.name, "spec": row.spec, "active": row.is_active}


def card_fields(card: Card) -> dict[str, Any]:
    """The active card for the bot API: every field, the depth prompt, whether it carries a book."""
    data = card.to_dict()
    data.pop("character_book", None)
    data["has_lorebook"] = card.character_book is not None
    return data
