"""Character cards (docs/cards.md): V1/V2/V3 JSON and PNG read into a `Card`, and written back as JSON or
PNG that SillyTavern imports. Pure: no Django; only a PNG's text chunks are read, never its pixels.
"""

from .apply import NodeOverride, card_env, example_blocks, fill_document, node_override, prepared_card
from .avatar import drawn_avatar, picture_only
from .book import book_entry_count, card_book
from .card import TEXT_FIELDS, Card, DepthPrompt
from .read import MAX_CARD_BYTES, ReadCard, card_png, read_card

__all__ = [
    "MAX_CARD_BYTES",
    "TEXT_FIELDS",
    "Card",
    "DepthPrompt",
    "NodeOverride",
    "ReadCard",
    "book_entry_count",
    "card_book",
    "card_env",
    "card_png",
    "drawn_avatar",
    "example_blocks",
    "fill_document",
    "node_override",
    "picture_only",
    "prepared_card",
    "read_card",
]
