"""The active-lorebooks cache: per server, the World Info settings and the compiled active books.

A `servers.generational_cache` declaration (stamp `lorebooks`): the shared cache holds the books as
the database stores them, compiled once per book version (bytes); each process keeps the books loaded
from those bytes. A warm read is one cache read and no SQL. During a database outage the process's last compiled copy, else the day-long
stale copy, is served (docs/reliability.md).

The per-channel timed-effect state (docs/worldinfo.md#timed-effects) lives here too, under its own key with a
day's TTL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.resilient_cache import cache_delete, cache_set
from engine.worldinfo import (
    CompiledBook,
    WorldInfoSettings,
    book_from_bytes,
    book_to_bytes,
    compile_book,
    switch_entries,
)
from servers.generational_cache import GenerationalCache, read_shared

from . import selectors

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


def state_key(server_id: int, channel: str) -> str:
    return f"lorebooks:v1:state:{server_id}:{channel}"


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


ACTIVE: GenerationalCache[int, StoredWorldInfo, ActiveWorldInfo] = GenerationalCache(
    name="lorebooks:active",
    stamp="lorebooks",
    load=load,
    compile=compile_stored,
    local_entries=LOCAL_ENTRIES,
    valid=lambda plain: isinstance(plain, StoredWorldInfo),
)


def get_world_info(server_id: int) -> ActiveWorldInfo:
    """The server's settings and compiled active lorebooks; from the caches when warm (no SQL)."""
    return ACTIVE.get(server_id)


# What a write bumps (servers.writes.server_write) so that every process reloads the server's World
# Info.
STAMP = ACTIVE.stamp


def clear_local() -> None:
    """Drop every compiled lorebook this process holds (tests call it between cases)."""
    ACTIVE.clear_local()


def read_state(server_id: int, channel: str) -> dict[str, Any]:
    """The channel's timed-effect state (empty when none or lost)."""
    state = read_shared(state_key(server_id, channel))
    return state if isinstance(state, dict) else {}


def write_state(server_id: int, channel: str, state: dict[str, Any]) -> None:
    """Store the channel's timed-effect state for a day (losing it only ends timers early)."""
    if state:
        cache_set(state_key(server_id, channel), state, STATE_SECONDS)
    else:
        cache_delete(state_key(server_id, channel))
