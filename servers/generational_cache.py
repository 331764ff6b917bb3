"""One generational cache for what requests read per server (docs/architecture.md): presets,
sampling, channel presets, cards, lorebooks, regex scripts and API tokens each declare a `GenerationalCache`
with their own `load` (the database → plain data) and `compile` (plain data → what a request uses).

Freshness comes from one number per (server, stamp): the **generation**.
- The database holds it (`servers.CacheStamp`); a write bumps it inside its own transaction
  (`bump`, called by `servers.writes.server_write`, the one way a service writes; outside a
  transaction it refuses), so it moves exactly when the change commits, and the new number is copied
  to the shared cache (`gen:v2:<stamp>:<server>`) once the transaction commits.
- The shared cache keeps each value as plain data beside the generation it was loaded at
  (`<name>:v2:<key>` = `(generation, plain)`, TTL `ST_PRESET_CACHE_TTL_MINUTES`). A reader reads the
  generation before it loads the database, so a reader that loaded just before a write stores its
  entry under the old number and cannot put an outdated value back.
- A process may keep the compiled value for the generation it was built from (a small LRU).
- Generations only grow. Each process checks the shared copy against the database at most every
  `CACHE_STAMP_CHECK_SECONDS` (one small query per server), and at once when the shared copy is
  missing or smaller than a number it has seen: a Redis restored from a snapshot taken before a
  change holds a smaller number, which is replaced, so the old entries beside it are never served.
- When the database errors while a value is loaded, a cache declared `stale=True` serves this
  process's last compiled copy, else the shared stale copy (`<name>:v2:stale:<key>`, one day), else
  its declared `outage` value, else the error propagates. A bump leaves the stale copies:
  an outdated value beats no answer during an outage. Cache-backend errors are misses
  (core.resilient_cache) and the database answers.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeGuard, TypeVar
from urllib.parse import quote

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import BigIntegerField, F, Value
from django.db.models.functions import Greatest

from core.resilient_cache import cache_add, cache_get, cache_get_many, cache_set, cache_set_many

from . import stamp_listener
from .models import CacheStamp

log = logging.getLogger("tavernkeep.cache")

STALE_SECONDS = 24 * 60 * 60
GENERATION_SECONDS = 30 * 24 * 60 * 60

K = TypeVar("K", bound=Hashable)
P = TypeVar("P")
V = TypeVar("V")

_MISSING: Any = object()
_NOTHING_SEEN: dict[str, int] = {}


def ttl_seconds() -> int:
    """How long a shared entry and a process's compiled copy live (`ST_PRESET_CACHE_TTL_MINUTES`)."""
    return max(1, int(settings.ST_PRESET_CACHE_TTL_MINUTES * 60))


def generation_key(stamp: str, server_id: int) -> str:
    return f"gen:v2:{stamp}:{server_id}"


# -- the generations: the database's stamps, the shared copy, and what this process has seen ---------

_seen_lock = threading.Lock()
_seen: dict[int, tuple[float, dict[str, int]]] = {}  # server → (checked at, stamp → largest seen)


def _check_seconds() -> float:
    return float(getattr(settings, "CACHE_STAMP_CHECK_SECONDS", 5))


def _first_generation() -> int:
    """Where a new stamp starts, and the least a bump moves it to: the clock in microseconds, so a
    database created (or restored) later never reuses a number an older one published."""
    return time.time_ns() // 1000


def _database_stamps(server_id: int, stamp: str) -> dict[str, int]:
    """The server's stamps; `stamp`'s row is created the first time anyone asks for it."""
    stamps = dict(CacheStamp.objects.filter(server_id=server_id).values_list("name", "generation"))
    if stamp not in stamps:
        row, _ = CacheStamp.objects.get_or_create(
            server_id=server_id, name=stamp, defaults={"generation": _first_generation()}
        )
        stamps[stamp] = row.generation
    return stamps


def current_generation(stamp: str, server_id: int, shared: Any) -> int | None:
    """The generation to trust for (stamp, server), given the shared cache's copy `shared`.

    None only when neither the shared cache nor the database can say (both down): nothing cached
    is then current, and the caller goes to the database (or its stale copy).
    """
    stamp_listener.ensure_listening(_bumped_elsewhere)
    shared = shared if isinstance(shared, int) else None
    now = time.monotonic()
    # A plain read: entries are replaced whole (never changed in place) under the lock.
    checked_at, known = _seen.get(server_id, (None, _NOTHING_SEEN))
    seen = known.get(stamp)
    fresh = checked_at is not None and now - checked_at < _check_seconds()
    if fresh and shared is not None and seen is not None and shared >= seen:
        if shared > seen:
            _remember_seen(server_id, {stamp: shared}, checked_at=None)
        return shared
    if fresh and shared is not None and seen is not None:
        # The shared copy went backwards (a Redis restored from an old snapshot): put ours back.
        log.warning(
            "cache generation %s of server %s went back from %s to %s", stamp, server_id, seen, shared
        )
        cache_set(generation_key(stamp, server_id), seen, GENERATION_SECONDS)
        return seen
    try:
        stamps = _database_stamps(server_id, stamp)
    except DatabaseError:
        # Cannot check: trust what is known, and do not retry before the next check is due.
        _remember_seen(server_id, {}, checked_at=now)
        if shared is not None or seen is not None:
            return max(x for x in (shared, seen) if x is not None)
        return None
    database = stamps[stamp]
    with _seen_lock:  # the database is the truth: forget larger numbers from an older life
        _seen[server_id] = (now, stamps)
    if shared != database:
        # Missing, or from before a change (a Redis restored from a snapshot). Never legitimately
        # larger: a number is published only after its write commits, and we read it before this query.
        cache_set(generation_key(stamp, server_id), database, GENERATION_SECONDS)
    return database


def _bumped_elsewhere(server_id: int, stamp: str, generation: int) -> None:
    """A bump another process committed (servers/stamp_listener.py): remember it as seen, so the
    next request here replaces an older shared copy and reloads."""
    _remember_seen(server_id, {stamp: generation}, checked_at=None)


def _remember_seen(server_id: int, stamps: dict[str, int], *, checked_at: float | None) -> None:
    with _seen_lock:
        old_checked, known = _seen.get(server_id, (0.0, {}))
        merged = dict(known)
        for name, generation in stamps.items():
            merged[name] = max(generation, merged.get(name, generation))
        _seen[server_id] = (old_checked if checked_at is None else checked_at, merged)


class StampOutsideTransaction(RuntimeError):
    """A stamp bumped outside a transaction: the number would move apart from the write it covers."""


def bump(stamp: str, server_id: int) -> None:
    """Make every cache riding `stamp` reload `server_id`'s values, in every process.

    Only inside the write's own transaction (services use `servers.writes.server_write`): the
    database's stamp moves with the write's rows, both or neither, and the shared cache learns the
    new number once that transaction commits. Outside one it raises StampOutsideTransaction.
    """
    if not transaction.get_connection().in_atomic_block:
        raise StampOutsideTransaction(
            f"stamp {stamp!r} of server {server_id} bumped outside a transaction "
            "(use servers.writes.server_write)"
        )
    rows = CacheStamp.objects.filter(server_id=server_id, name=stamp)
    larger = Greatest(F("generation") + 1, Value(_first_generation(), output_field=BigIntegerField()))
    if not rows.update(generation=larger):
        _, created = CacheStamp.objects.get_or_create(
            server_id=server_id, name=stamp, defaults={"generation": _first_generation()}
        )
        if not created:
            rows.update(generation=larger)
    generation = rows.values_list("generation", flat=True).get()
    stamp_listener.notify(server_id, stamp, generation)  # delivered at the commit
    # The cache layer's one commit hook: the copy to the shared cache is a shortcut. Were it lost (the
    # process dies after the commit, Redis is down), the NOTIFY and each process's database check
    # (every CACHE_STAMP_CHECK_SECONDS) still bring the new number; the write itself stands.
    transaction.on_commit(lambda: _publish(stamp, server_id, generation))


def _publish(stamp: str, server_id: int, generation: int) -> None:
    shared = cache_get(generation_key(stamp, server_id))
    if not isinstance(shared, int) or shared < generation:
        cache_set(generation_key(stamp, server_id), generation, GENERATION_SECONDS)
    _remember_seen(server_id, {stamp: generation}, checked_at=None)


# -- the caches -------------------------------------------------------------------------------------

_registry: list[GenerationalCache[Any, Any, Any]] = []


def clear_local() -> None:
    """Drop every compiled value this process holds (tests call it between cases). What the process
    has learnt of the generations stays, as it would in a live process."""
    for declared in _registry:
        declared.clear_local()


def forget_everything_local() -> None:
    """A brand-new process: no compiled values and no generations seen (tests call it between cases)."""
    clear_local()
    with _seen_lock:
        _seen.clear()


def _identity(value: Any) -> Any:
    return value


def _server_is_key(key: Any) -> int:
    return int(key)


@dataclass(frozen=True, slots=True)
class _Local(Generic[V]):
    generation: int
    value: V
    expires: float  # time.monotonic() deadline


@dataclass(eq=False)
class GenerationalCache(Generic[K, P, V]):
    """One cached idea per key (usually a server id): `load(key)` reads the database and returns
    plain, picklable data; `compile(plain)` turns it into what requests use.

    - `stamp`: the generation this cache rides (caches sharing one reload together);
      defaults to `name`. `server_of(key)` says whose stamp covers a key (default: the key itself).
    - `shared`: keep `(generation, plain)` in the shared cache.
    - `stale`: keep a day-long stale copy and serve it (or this process's last copy) when the
      database errors; `outage()` answers when there is no copy at all (default: the error).
    - `local_entries`: how many compiled values this process keeps (0: none; a callable reads a
      setting).
    - `valid(plain)`: whether a shared entry has the expected shape (entries from older code).
    - `keep(plain)`: whether a loaded value is stored at all (shared, stale or in this process);
      the API tokens' cache keeps no answer for a token nobody made, so made-up tokens write nothing.
    """

    name: str
    load: Callable[[K], P]
    compile: Callable[[P], V] = _identity
    stamp: str = ""
    server_of: Callable[[K], int] = _server_is_key
    shared: bool = True
    stale: bool = True
    outage: Callable[[], V] | None = None
    local_entries: int | Callable[[], int] = 0
    valid: Callable[[Any], bool] = lambda plain: True
    keep: Callable[[Any], bool] = lambda plain: True
    _local: OrderedDict[K, _Local[V]] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.stamp = self.stamp or self.name
        _registry.append(self)

    def entry_key(self, key: K) -> str:
        return f"{self.name}:v2:{_key_text(key)}"

    def stale_key(self, key: K) -> str:
        return f"{self.name}:v2:stale:{_key_text(key)}"

    def get(self, key: K) -> V:
        """The current value for `key`: this process's copy, else the shared entry, else the database."""
        server_id = self.server_of(key)
        gen_key = generation_key(self.stamp, server_id)
        entry_key = self.entry_key(key) if self.shared else ""
        local_first = bool(self._limit())
        prefetched = _prefetched_for(server_id)
        from_block = False
        if prefetched is not None and gen_key in prefetched:  # read with the others (`read_together`)
            found = {gen_key: prefetched[gen_key]}
            if entry_key in prefetched:  # kept only while current (below): a later lookup then
                found[entry_key] = prefetched.pop(entry_key)  # reads what a fill stored since
                from_block = True
        elif self.shared and not local_first:  # small values: the generation and the entry in one trip
            found = cache_get_many([gen_key, entry_key])
        else:  # a process copy usually answers: read only the small generation first
            found = {gen_key: cache_get(gen_key)}
        generation = current_generation(self.stamp, server_id, found.get(gen_key))
        if prefetched is not None and generation is not None and gen_key in prefetched:
            prefetched[gen_key] = generation  # the next lookup on this stamp needs no second check
        if generation is not None:
            local = self._local_get(key)
            if local is not None and local.generation == generation and local.expires > time.monotonic():
                return local.value
            entry = found[entry_key] if entry_key in found else cache_get(entry_key) if self.shared else None
            if _holds(entry, generation) and self.valid(entry[1]):
                if from_block and prefetched is not None:
                    prefetched[entry_key] = entry  # current: it serves the block's next lookup too
                return self._remember(key, generation, self.compile(entry[1]))
        return self.fill(key, generation)

    def fill(self, key: K, generation: int | None) -> V:
        """Load `key` from the database, store it under `generation` and return it compiled."""
        try:
            plain = self.load(key)
        except DatabaseError as exc:
            return self._during_outage(key, exc)
        if not self.keep(plain):
            return self.compile(plain)
        values: dict[str, Any] = {}
        if self.shared and generation is not None:
            values[self.entry_key(key)] = (generation, plain)
        if self.stale:
            cache_set_many({self.stale_key(key): plain}, STALE_SECONDS)
        if values:
            cache_set_many(values, ttl_seconds())
        value = self.compile(plain)
        return value if generation is None else self._remember(key, generation, value)

    def clear_local(self) -> None:
        with self._lock:
            self._local.clear()

    def _limit(self) -> int:
        return self.local_entries() if callable(self.local_entries) else self.local_entries

    def _local_get(self, key: K) -> _Local[V] | None:
        if not self._limit():
            return None
        with self._lock:
            entry = self._local.get(key)
            if entry is not None:
                self._local.move_to_end(key)
            return entry

    def _remember(self, key: K, generation: int, value: V) -> V:
        limit = self._limit()
        if limit:
            entry = _Local(generation, value, time.monotonic() + ttl_seconds())
            with self._lock:
                self._local[key] = entry
                self._local.move_to_end(key)
                while len(self._local) > limit:
                    self._local.popitem(last=False)
        return value

    def _during_outage(self, key: K, error: DatabaseError) -> V:
        if not self.stale:
            raise error
        with self._lock:
            local = self._local.get(key)
        if local is not None:
            log.warning("database error: serving this process's last copy of %s %s", self.name, key)
            return local.value
        plain = cache_get(self.stale_key(key), _MISSING)
        if plain is not _MISSING and self.valid(plain):
            log.warning("database error: serving the stale copy of %s %s", self.name, key)
            return self.compile(plain)
        if self.outage is not None:
            log.warning("database error and no copy of %s %s: serving its outage value", self.name, key)
            return self.outage()
        raise error


_prefetch = threading.local()  # this thread's `read_together` block: (server id, shared values read)


def _prefetched_for(server_id: int) -> dict[str, Any] | None:
    held = getattr(_prefetch, "held", None)
    return held[1] if held is not None and held[0] == server_id else None


def read_shared(key: str) -> Any:
    """`cache_get(key)`, from the current `read_together` block's read when it read `key`."""
    held = getattr(_prefetch, "held", None)
    if held is not None and key in held[1]:
        return held[1][key]
    return cache_get(key)


@contextmanager
def read_together(server_id: int, also: tuple[str, ...] = ()) -> Iterator[None]:
    """Within the block, this thread's lookups for `server_id` take their generations (and the
    entries of the caches kept only in the shared cache, keyed by the server) from one read of
    them all at the start, instead of a round trip each: a dozen trips to Redis become one on an
    assemble request. The numbers are those a request that made every lookup at its start would
    read (each is still checked against the database as `current_generation` says), so this is
    for requests that read and do not write what they read (the assemble API). `also`: other shared
    keys read in the same trip, for `read_shared` (or for a cache's own entry: the API's token).
    Inside a block for the same server that read every key of `also`, the outer read serves."""
    outer = getattr(_prefetch, "held", None)
    if outer is not None and outer[0] == server_id and all(key in outer[1] for key in also):
        yield
        return
    stamps = {declared.stamp for declared in _registry}
    keys = [generation_key(stamp, server_id) for stamp in sorted(stamps)]
    keys += [
        declared.entry_key(server_id)
        for declared in _registry
        if declared.shared and not declared._limit() and declared.server_of is _server_is_key
    ]
    keys += also
    found = cache_get_many(keys)
    _prefetch.held = (server_id, {key: found.get(key) for key in keys})
    try:
        yield
    finally:
        _prefetch.held = outer


# -- per-channel stamps ----------------------------------------------------------------------------
# A stored channel (conversations/channels) changes with nearly every event, far more often than a
# server's settings, so its stamp is kept only in the shared cache: a fresh random number set after
# each committed write, which the assemble API reads in its one MGET. A process keeps what it read
# of the channel beside the stamp it read first, so a write that commits between the two makes the
# next request read again. A lost copy (Redis down at the commit, the writer died, a restored
# snapshot) is bounded by the reader's own check against the database every CACHE_STAMP_CHECK_SECONDS.

_channel_listeners: list[Callable[[int, int], None]] = []


def channel_stamp_key(server_id: int, channel_id: int) -> str:
    return f"chan:v1:{server_id}:{channel_id}"


def channel_stamp(server_id: int, channel_id: int) -> int | None:
    """The channel's stamp (from the current `read_together` block's read when it read it); one is
    made when there is none. None when the shared cache cannot say: then nothing kept is current."""
    key = channel_stamp_key(server_id, channel_id)
    found = read_shared(key)
    if isinstance(found, int):
        return found
    fresh = secrets.randbits(62)
    return fresh if cache_add(key, fresh, GENERATION_SECONDS) else None


def bump_channel(server_id: int, channel_id: int) -> None:
    """The channel's stored row, messages or thread parent change in the current transaction: this
    process forgets its copies now, and every process sees a new stamp once the write commits (at
    once when there is no transaction)."""
    for forget in _channel_listeners:
        forget(server_id, channel_id)
    key = channel_stamp_key(server_id, channel_id)
    transaction.on_commit(lambda: cache_set(key, secrets.randbits(62), GENERATION_SECONDS))


def on_channel_bump(forget: Callable[[int, int], None]) -> None:
    """Have `forget(server_id, channel_id)` called at each `bump_channel` (a process's own copies)."""
    _channel_listeners.append(forget)


def channel_check_seconds() -> float:
    """How long a process trusts a channel's kept copy under an unchanged stamp before it reads the
    database again (CACHE_STAMP_CHECK_SECONDS, as for the generations)."""
    return _check_seconds()


def _holds(entry: Any, generation: int) -> TypeGuard[tuple[int, Any]]:
    return isinstance(entry, tuple) and len(entry) == 2 and entry[0] == generation


def _key_text(key: Any) -> str:
    """The key as cache-key text: each part percent-quoted, so a name with spaces or colons (a group's,
    a preset's) makes a key every cache backend takes, and no two keys read the same."""
    parts = key if isinstance(key, tuple) else (key,)
    return ":".join(quote(str(part), safe="") for part in parts)
