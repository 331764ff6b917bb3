"""World Info (docs/worldinfo.md): lorebook import, activation and placement inputs. Pure: no Django, no
ORM."""

from engine.worldinfo.activate import Activated, Activation, ActivationRequest, Skipped, activate
from engine.worldinfo.compiled import CompiledBook, CompiledEntry, compile_book, switch_entries
from engine.worldinfo.contribution import (
    AN_BOTTOM_INDEX,
    CARD_DEPTH_INDEX,
    INJECTION_INDEX,
    INJECTION_ORDER,
    EntryRewrite,
    Replay,
    WorldInfoContribution,
    WorldInfoInput,
    contribute,
)
from engine.worldinfo.fields import entry_from_st
from engine.worldinfo.gc_pause import paused_gc
from engine.worldinfo.importer import (
    check_lorebook_size,
    convert_character_book,
    entry_tokens,
    export_world_info,
    parse_lorebook,
    summarize,
)
from engine.worldinfo.model import (
    POSITIONS,
    CharacterFilter,
    Entry,
    LorebookRefused,
    LorebookSummary,
    ParsedLorebook,
)
from engine.worldinfo.placement import NOTE_POSITIONS
from engine.worldinfo.replay import replay_state
from engine.worldinfo.scan import ScanMessage, ScanTexts
from engine.worldinfo.settings import STRATEGIES, WorldInfoSettings
from engine.worldinfo.stored import FORMAT as COMPILED_FORMAT
from engine.worldinfo.stored import book_from_bytes, book_to_bytes

__all__ = [
    "AN_BOTTOM_INDEX",
    "CARD_DEPTH_INDEX",
    "COMPILED_FORMAT",
    "INJECTION_INDEX",
    "INJECTION_ORDER",
    "NOTE_POSITIONS",
    "POSITIONS",
    "STRATEGIES",
    "Activated",
    "Activation",
    "ActivationRequest",
    "CharacterFilter",
    "CompiledBook",
    "CompiledEntry",
    "Entry",
    "EntryRewrite",
    "LorebookRefused",
    "LorebookSummary",
    "ParsedLorebook",
    "Replay",
    "ScanMessage",
    "ScanTexts",
    "Skipped",
    "WorldInfoContribution",
    "WorldInfoInput",
    "WorldInfoSettings",
    "activate",
    "book_from_bytes",
    "book_to_bytes",
    "check_lorebook_size",
    "compile_book",
    "contribute",
    "convert_character_book",
    "entry_from_st",
    "entry_tokens",
    "export_world_info",
    "parse_lorebook",
    "paused_gc",
    "replay_state",
    "summarize",
    "switch_entries",
]
