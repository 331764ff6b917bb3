"""The pure engine: SillyTavern formats in, prompts out. No Django, no ORM.

The data flows through it one way (docs/architecture.md):
parse (`st_format`) → compile (`compiled`, macros parsed once) → render (`macros`) →
native items (`native`) → rearrange (`rearrange`, `injection`) → messages (`providers`, `tokens`).

Callers outside the engine import from this package or from a sub-package's own `__init__`
(`engine.st_format`, `engine.macros`), never from the modules inside.
"""

from .assemble import Assembly, StoredStm, assemble
from .buckets import BucketDocument, BucketError, parse_buckets
from .compiled import CompiledNode, CompiledPreset, compile_preset

__all__ = [
    "Assembly",
    "BucketDocument",
    "BucketError",
    "CompiledNode",
    "CompiledPreset",
    "StoredStm",
    "assemble",
    "compile_preset",
    "parse_buckets",
]
