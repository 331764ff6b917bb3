"""World Info (SPEC §7): lorebook import, activation and placement inputs. Pure: no Django, no ORM."""

from engine.worldinfo.importer import convert_character_book, export_world_info, parse_lorebook, summarize
from engine.worldinfo.model import (
    POSITIONS,
    CharacterFilter,
    Entry,
    LorebookRefused,
    LorebookSummary,
    ParsedLorebook,
)

__all__ = [
    "POSITIONS",
    "CharacterFilter",
    "Entry",
    "LorebookRefused",
    "LorebookSummary",
    "ParsedLorebook",
    "convert_character_book",
    "export_world_info",
    "parse_lorebook",
    "summarize",
]
