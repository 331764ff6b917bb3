"""A compiled lorebook as bytes, so one compile per stored book version serves every process.

The bytes are a pickle of the `CompiledBook` (keys compiled, decorators split off), compressed with
zlib at its fastest level (a 10 000-entry book: 5.3 MB to 2.3 MB in about 50 ms, which the database
then stores and returns several times faster than the raw pickle), tagged with
`FORMAT`: a digest of the field layout of every class the pickle holds. Bytes written under another
layout (an older or newer engine) load as None, and the caller compiles the book again from its
entries. Only bytes this module wrote are loaded (they come from our own database or cache), and even
so the loader rebuilds nothing but the engine's own classes listed here: a pickle naming any other
callable (`os.system`, say) loads as None without calling it, so bytes planted in the database or
the cache cannot run code.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import zlib
from dataclasses import fields
from operator import attrgetter
from typing import Any

from engine.regex import JsRegex
from engine.worldinfo.compiled import CompiledBook, CompiledEntry, Key
from engine.worldinfo.gc_pause import paused_gc
from engine.worldinfo.keys import CompiledKey
from engine.worldinfo.model import CharacterFilter, Entry

_LAYOUT_VERSION = 2  # raise when what a field means changes without its name changing
_CLASSES = (CompiledBook, CompiledEntry, Key, CompiledKey, JsRegex, Entry, CharacterFilter)
_LEFT_OUT = {"memo"}  # a compiled entry's request memo starts empty in every process
# Each object travels as its class and its field values in order, rebuilt by calling the class:
# half the time of the dataclasses' own pickling, which looks the fields up again per object.
_FIELDS = {cls: tuple(f.name for f in fields(cls) if f.name not in _LEFT_OUT) for cls in _CLASSES}
_GETTERS = {cls: attrgetter(*names) for cls, names in _FIELDS.items()}
FORMAT = hashlib.blake2b(
    repr((_LAYOUT_VERSION, [(cls.__name__, names) for cls, names in _FIELDS.items()])).encode(),
    digest_size=8,
).hexdigest()
_HEADER = f"tk-wi:{FORMAT}:".encode()


_ALLOWED = {(cls.__module__, cls.__qualname__): cls for cls in _CLASSES}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        allowed = _ALLOWED.get((module, name))
        if allowed is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a compiled book")
        return allowed


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        getter = _GETTERS.get(type(obj))
        if getter is None:
            return NotImplemented
        return type(obj), getter(obj)


def book_to_bytes(book: CompiledBook) -> bytes:
    """The compiled book as bytes."""
    out = io.BytesIO()
    with paused_gc():
        _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(book)
    return _HEADER + zlib.compress(out.getbuffer(), 1)


def book_from_bytes(blob: bytes | memoryview | None) -> CompiledBook | None:
    """The compiled book `book_to_bytes` wrote, or None when the bytes are of another format."""
    if not blob:
        return None
    data = bytes(blob)
    if not data.startswith(_HEADER):
        return None
    try:
        pickled = zlib.decompress(memoryview(data)[len(_HEADER) :])
        with paused_gc():
            book = _Unpickler(io.BytesIO(pickled)).load()
    except Exception:  # bytes from an engine whose classes moved, or not ours: compile again
        return None
    return book if isinstance(book, CompiledBook) else None
