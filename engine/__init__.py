"""The pure engine: SillyTavern formats in, prompts out. No Django, no ORM.

The data flows through it one way (docs/architecture.md):
parse (`st_format`) → compile (`compiled`, macros parsed once) → render (`macros`) →
native items, rearrange and messages (`assemble`, whose steps live in it) → the provider's shape
(`providers`, `tokens`).

Callers outside the engine import from this package or from a sub-package's own `__init__`
(`engine.st_format`, `engine.macros`), never from the modules inside.
"""

from .assemble import SAMPLE_NOTE, Assembly, AssemblyJson, StoredStm, assemble
from .bounded import BoundedCache, MiB, text_cache
from .buckets import (
    AUTHORS_NOTE_POSITIONS,
    UNSTORABLE_CHAR,
    UNSTORABLE_ESCAPE,
    BucketDocument,
    BucketError,
    HistoryMessage,
    StmLine,
    decode_json,
    history_messages,
    parse_buckets,
    refuse_unstorable_text,
)
from .compiled import CompiledNode, CompiledPreset, compile_preset
from .errors import EngineError
from .parts import Item, Message, Part, Source, native_source
from .providers import CONVERSATION_START, shape
from .stm import (
    CUT_BY_CAP,
    EMPTY,
    EXPIRED,
    HIDDEN_NO_OPT_IN,
    HIDDEN_PRIVATE_CHANNEL,
    HIDDEN_PRIVATE_PARENT,
    SAME_CHANNEL,
    SHOWN,
    VERDICTS,
    Contribution,
    EntrySnapshot,
    StmContext,
    StmMessage,
    StmPolicy,
    StmSettings,
    contribute,
)
from .tokens import DEFAULT_ENCODING, ENCODINGS, count_text, load_tables
from .vocabulary import GENERATION_TYPES, PROVIDERS, ROLES, STYLES

__all__ = [
    "AUTHORS_NOTE_POSITIONS",
    "CONVERSATION_START",
    "CUT_BY_CAP",
    "DEFAULT_ENCODING",
    "EMPTY",
    "ENCODINGS",
    "EXPIRED",
    "GENERATION_TYPES",
    "HIDDEN_NO_OPT_IN",
    "HIDDEN_PRIVATE_CHANNEL",
    "HIDDEN_PRIVATE_PARENT",
    "PROVIDERS",
    "ROLES",
    "SAME_CHANNEL",
    "SAMPLE_NOTE",
    "SHOWN",
    "STYLES",
    "UNSTORABLE_CHAR",
    "UNSTORABLE_ESCAPE",
    "VERDICTS",
    "Assembly",
    "AssemblyJson",
    "BoundedCache",
    "BucketDocument",
    "BucketError",
    "CompiledNode",
    "CompiledPreset",
    "Contribution",
    "EngineError",
    "EntrySnapshot",
    "HistoryMessage",
    "Item",
    "Message",
    "MiB",
    "Part",
    "Source",
    "StmContext",
    "StmLine",
    "StmMessage",
    "StmPolicy",
    "StmSettings",
    "StoredStm",
    "assemble",
    "compile_preset",
    "contribute",
    "count_text",
    "decode_json",
    "history_messages",
    "load_tables",
    "native_source",
    "parse_buckets",
    "refuse_unstorable_text",
    "shape",
    "text_cache",
]
