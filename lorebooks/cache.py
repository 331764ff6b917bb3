"""The active-lorebooks cache: per server, the World Info settings and the compiled active books.

Like the active-preset cache (presets.cache): the shared cache holds a generation token per server
(`lorebooks:v1:gen:<server>`, replaced on every write) and the books as the database stores them,
compiled once per book version (`lorebooks:v1:active:<server>` = `(generation, StoredWorldInfo)`);
each process keeps the books loaded from those bytes for the generation it read. A warm read is one
cache read and no SQL. Cache-backend errors are misses (servers.resilient_cache): the database answers.

The per-channel timed-effect state (SPEC §7.6) lives here too, under its own key with a day's TTL.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from engine.worldinfo import (
    CompiledBook,
    WorldInfoSettings,
    book_from_bytes,
    book_to_bytes,
    compile_book,
    switch_entries,
)
from servers.resilient_cache import cache_delete, cache_get, cache_set

from . import selectors

GENERATION_SECONDS = 30 * 24 * 60 * 60
STATE_SECONDS = 24 * 60 * 60
LOCAL_ENTRIES = 64


@dataclass(frozen=True, slots=True)
class StoredWorldInfo:
    """What the shared cache holds for a server: plain data, cheap to (un)pickle."""

    settings: WorldInfoSettings
    # (lorebook id, name, engine.worldinfo.book_to_bytes, entries switched on/off since, by uid)
    books: tuple[tuple[int, str, bytes, dict[int, bool]], ...]


@dataclass(frozen=True, slots=True)
class ActiveWorldInfo:
    """A server's World Info for one assembly: its settings and its compiled active books."""

    settings: WorldInfoSettings
    books: tuple[CompiledBook, ...]


@dataclass(frozen=True, slots=True)
class _Local:
    generation: str
    active: ActiveWorldInfo
    expires: float


_local: OrderedDict[int, _Local] = OrderedDict()
_lock = threading.Lock()


def _ttl() -> int:
    return max(1, int(settings.ST_PRESET_CACHE_TTL_MINUTES * 60))


def _generation_key(server_id: int) -> str:
    return f"lorebooks:v1:gen:{server_id}"


def _active_key(server_id: int) -> str:
    return f"lorebooks:v1:active:{server_id}"


def _state_key(server_id: int, channel: str) -> str:
    return f"lorebooks:v1:state:{server_id}:{channel}"


def get_world_info(server_id: int) -> ActiveWorldInfo:
    """The server's settings and compiled active lorebooks; from the caches when warm (no SQL)."""
    generation = cache_get(_generation_key(server_id))
    if generation is not None:
        with _lock:
            local = _local.get(server_id)
        if local is not None and local.generation == generation and local.expires > time.monotonic():
            return local.active
        entry = cache_get(_active_key(server_id))
        if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == generation:
            return _remember(server_id, generation, entry[1])
    else:
        generation = _new_generation(server_id)
    stored = load(server_id)
    cache_set(_active_key(server_id), (generation, stored), _ttl())
    return _remember(server_id, generation, stored)


def load(server_id: int) -> StoredWorldInfo:
    """The server's World Info from the database."""
    books = tuple(
        (lorebook_id, name, blob or book_to_bytes(_compile(lorebook_id, name)), switched)
        for lorebook_id, name, blob, switched in selectors.active_compiled(server_id)
    )
    return StoredWorldInfo(settings=selectors.world_info_settings(server_id), books=books)


def compile_stored(stored: StoredWorldInfo) -> ActiveWorldInfo:
    """Every book of `stored`, loaded from its compiled bytes (compiled again only when the bytes are
    of another engine's layout)."""
    return ActiveWorldInfo(
        settings=stored.settings,
        books=tuple(
            _loaded(lorebook_id, name, blob, switched) for lorebook_id, name, blob, switched in stored.books
        ),
    )


def _loaded(lorebook_id: int, name: str, blob: bytes, switched: dict[int, bool]) -> CompiledBook:
    book = book_from_bytes(blob)
    return switch_entries(book, switched) if book is not None else _compile(lorebook_id, name)


def _compile(lorebook_id: int, name: str) -> CompiledBook:
    return compile_book(name, selectors.engine_entries(lorebook_id))


def invalidate(server_id: int) -> None:
    """Forget the server's cached World Info in every process."""
    _new_generation(server_id)
    cache_delete(_active_key(server_id))
    with _lock:
        _local.pop(server_id, None)


def clear_local() -> None:
    """Drop every compiled lorebook this process holds (tests call it between cases)."""
    with _lock:
        _local.clear()


def _new_generation(server_id: int) -> str:
    generation = secrets.token_hex(8)
    cache_set(_generation_key(server_id), generation, GENERATION_SECONDS)
    return generation


def _remember(server_id: int, generation: str, stored: StoredWorldInfo) -> ActiveWorldInfo:
    active = compile_stored(stored)
    with _lock:
        _local[server_id] = _Local(generation, active, time.monotonic() + _ttl())
        _local.move_to_end(server_id)
        while len(_local) > LOCAL_ENTRIES:
            _local.popitem(last=False)
    return active


def read_state(server_id: int, channel: str) -> dict[str, Any]:
    """The channel's timed-effect state (empty when none or lost)."""
    state = cache_get(_state_key(server_id, channel))
    return state if isinstance(state, dict) else {}


def write_state(server_id: int, channel: str, state: dict[str, Any]) -> None:
    """Store the channel's timed-effect state for a day (losing it only ends timers early)."""
    if state:
        cache_set(_state_key(server_id, channel), state, STATE_SECONDS)
    else:
        cache_delete(_state_key(server_id, channel))
