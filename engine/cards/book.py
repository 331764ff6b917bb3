"""A card's embedded `character_book` as the character's World Info book
(docs/worldinfo.md#books-and-settings, docs/cards.md).

It is converted as SillyTavern converts it (docs/worldinfo.md#import) and compiled once per distinct book,
then joins the server's active lorebooks in every assembly while the card is active, ordered as the character
book.
"""

from __future__ import annotations

import json

from engine.bounded import MiB, text_cache
from engine.worldinfo import CompiledBook, LorebookRefused, compile_book, convert_character_book

from .card import Card


def card_book(card: Card | None) -> CompiledBook | None:
    """The active card's book, compiled (None when the card has none, or an unusable one)."""
    if card is None or not card.character_book:
        return None
    return _compiled(card.name, json.dumps(card.character_book, sort_keys=True, ensure_ascii=False))


def book_entry_count(card: Card) -> int | None:
    """How many entries the card's book brings (None: no book), as the import summary reports it."""
    if not card.character_book:
        return None
    try:
        entries, _ = convert_character_book(card.character_book)
    except LorebookRefused:
        return 0
    return len(entries)


@text_cache(max_entries=64, max_bytes=64 * MiB, weight=4)  # the compiled entries and their patterns
def _compiled(name: str, book_json: str) -> CompiledBook | None:
    try:
        entries, _ = convert_character_book(json.loads(book_json))
    except LorebookRefused:
        return None
    return compile_book(f"{name} (card)", entries, is_character=True)
