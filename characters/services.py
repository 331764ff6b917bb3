"""Writes for character cards: import, activate, deactivate, delete. Each is one transaction with an
audit event (servers.writes.server_write), and bumps the cards' cache stamp inside it."""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.utils import timezone

from core.actors import Actor, user_of
from core.errors import UserError
from core.names import clean_name
from engine.cards import MAX_CARD_BYTES, Card, ReadCard, book_entry_count, read_card
from servers.audit_actions import AuditAction
from servers.imports import NameClash, OnClash, place_import
from servers.models import AuditEvent, Server
from servers.writes import server_write

from . import cache as card_cache
from .models import NAME_MAX_LENGTH
from .models import Card as CardRow


class CardError(UserError):
    """A write that cannot be done as asked; `message` is one sentence for the user."""


class CardNameClash(NameClash, CardError):
    kind = "character card"


@dataclass(frozen=True)
class CardImportResult:
    row: CardRow
    read: ReadCard
    replaced: bool
    lorebook_entries: int | None  # the embedded book's entries, None when the card has no book

    @property
    def card(self) -> Card:
        return self.read.card


def card_import(
    *,
    server: Server,
    raw: bytes,
    filename: str,
    name: str | None = None,
    on_clash: OnClash = "ask",
    activate: bool = True,
    by: Actor,
) -> CardImportResult:
    """Read and store a card. Raises ImportRefused (not a card / too large) or CardNameClash; nothing is
    written on any error. A replacement keeps the replaced card's row (its id, its places in groups)
    and its active flag."""
    read = read_card(raw, max_bytes=MAX_CARD_BYTES)
    book_entries = book_entry_count(read.card)
    wanted = (
        clean_name(name, max_length=NAME_MAX_LENGTH)
        or clean_name(read.card.name, max_length=NAME_MAX_LENGTH)
        or "Unnamed character"
    )
    with server_write(server_id=server.pk, stamps=(card_cache.STAMP,)):
        placement = place_import(
            server_id=server.pk,
            rows=server.cards.all(),
            wanted=wanted,
            on_clash=on_clash,
            max_length=NAME_MAX_LENGTH,
            clash=CardNameClash,
        )
        wanted, replaced, is_active = placement.name, placement.replaces is not None, activate
        if placement.replaces is not None:
            is_active = placement.replaces.is_active
        if is_active:
            others = server.cards.filter(is_active=True)
            if placement.replaces is not None:
                others = others.exclude(pk=placement.replaces.pk)
            others.update(is_active=False)
        values = {
            "spec": read.card.spec,
            "is_active": is_active,
            "fields": read.card.to_dict(),
            "original": json.dumps(read.source, ensure_ascii=False),
            "filename": filename[:255],
            "avatar": read.avatar,
            "warnings": list(read.warnings),
        }
        if placement.replaces is not None:
            # The same row, changed: what points at the card (its places in groups, its members'
            # notes) stays with it, as a replaced card stays in SillyTavern's groups.
            row = placement.replaces
            for key, value in values.items():
                setattr(row, key, value)
            row.save()
        else:
            row = CardRow.objects.create(
                server=server,
                name=wanted,
                created_by=user_of(by),
                **values,
            )
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.CARD_REPLACE if replaced else AuditAction.CARD_IMPORT,
            target=row,
            detail={"spec": read.card.spec, "active": is_active},
        )
    return CardImportResult(row=row, read=read, replaced=replaced, lorebook_entries=book_entries)


def card_activate(*, card: CardRow, by: Actor) -> None:
    """Make `card` the server's only active character."""
    with server_write(server_id=card.server_id, stamps=(card_cache.STAMP,), lock=True):
        CardRow.objects.filter(server_id=card.server_id, is_active=True).exclude(pk=card.pk).update(
            is_active=False
        )
        CardRow.objects.filter(pk=card.pk).update(is_active=True, updated_at=timezone.now())
        AuditEvent.record(
            server=card.server_id,
            actor=by,
            action=AuditAction.CARD_ACTIVATE,
            target=card,
        )
    card.is_active = True


def card_deactivate(*, card: CardRow, by: Actor) -> None:
    with server_write(server_id=card.server_id, stamps=(card_cache.STAMP,)):
        CardRow.objects.filter(pk=card.pk).update(is_active=False, updated_at=timezone.now())
        AuditEvent.record(
            server=card.server_id,
            actor=by,
            action=AuditAction.CARD_DEACTIVATE,
            target=card,
        )
    card.is_active = False


def card_delete(*, card: CardRow, by: Actor) -> None:
    with server_write(server_id=card.server_id, stamps=(card_cache.STAMP,)):
        AuditEvent.record(
            server=card.server_id,
            actor=by,
            action=AuditAction.CARD_DELETE,
            target=card,
            detail={"name": card.name},
        )
        card.delete()
