"""Pausing Python's cyclic garbage collector while a large lorebook's objects are built.

Parsing, compiling, storing or loading a 10 000-entry book makes a few hundred thousand small objects
at once; the collector would scan the growing heap again and again meanwhile (it costs as much as
the work itself), yet none of these objects forms a cycle. Reference counting still frees memory as
usual; the collector runs again once the outermost pause ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic collection inside the block (nested and concurrent pauses end with the last one)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
