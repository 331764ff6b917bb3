"""Process-wide caches that threads share safely and that hold a bounded number of bytes
(docs/reliability.md, "Process-wide caches").

A web process serves requests on several threads, and what one server sends decides what these
caches hold: a cache bounded only by its count of entries (1,024 texts) may hold 1,024 texts of
10 MiB each. `BoundedCache` is a least-recently-used map under one lock, bounded both by entries and
by the bytes its entries are said to cost; `text_cache` is the decorator for a function of texts
(`functools.lru_cache`'s place), which weighs an entry by the length of its texts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import wraps
from typing import Generic, ParamSpec, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
P = ParamSpec("P")
R = TypeVar("R")

MiB = 1024 * 1024
ENTRY_OVERHEAD = 200  # bytes an entry costs beyond its texts (the key tuple, the node, the value's shell)
_MISSING = object()


class BoundedCache(Generic[K, V]):
    """A least-recently-used map shared by threads: at most `max_entries` entries and `max_bytes`
    bytes (each entry's size is what `put` is told). An entry larger than `max_bytes // 8` is not
    kept at all, so one huge value never empties the cache of everything else."""

    def __init__(self, *, max_entries: int, max_bytes: int) -> None:
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0

    def get(self, key: K, default: V | None = None) -> V | None:
        """The value kept for `key` (now the most recently used), or `default`."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return default
            self._entries.move_to_end(key)
            return found[0]

    def put(self, key: K, value: V, size: int) -> None:
        size = max(1, size)
        if size > self.max_bytes // 8:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[key] = (value, size)
            self._bytes += size
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def pop(self, key: K) -> None:
        """Drop `key`'s entry, if there is one."""
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def bytes(self) -> int:
        """What the entries held now are said to cost."""
        return self._bytes


def text_size(args: tuple[object, ...], weight: float = 1.0) -> int:
    """An entry's cost: its texts' lengths (times `weight`, for a value that grows with them) plus
    a fixed overhead. A character is counted as one byte; what is not text counts nothing."""
    texts = sum(len(arg) for arg in args if isinstance(arg, str | bytes))
    return int(texts * weight) + ENTRY_OVERHEAD


def text_cache(
    *, max_entries: int, max_bytes: int, weight: float = 1.0
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Keep a function's results per positional arguments (hashable, mostly texts), bounded by
    entries and bytes; `weight` says how much larger than its texts an entry's value is."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        kept: BoundedCache[tuple[object, ...], object] = BoundedCache(
            max_entries=max_entries, max_bytes=max_bytes
        )

        @wraps(function)
        def cached(*args: P.args, **kwargs: P.kwargs) -> R:
            if kwargs:
                return function(*args, **kwargs)
            found = kept.get(args, _MISSING)
            if found is not _MISSING:
                return found  # type: ignore[return-value]
            result = function(*args, **kwargs)
            kept.put(args, result, text_size(args, weight))
            return result

        cached.cache = kept  # type: ignore[attr-defined]
        return cached

    return decorate
