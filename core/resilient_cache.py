"""The Django cache, with backend failures turned into misses.

Redis is an accelerator, never a dependency: when it is down, callers fall back to the database
and a warning is logged (once a minute at most, so a dead Redis does not flood the log).

A breaker (issue 35): each call waits at most the socket timeout (1 s, no retries: see
config/settings.py), and after a failure this process stops asking for `CACHE_BREAKER_SECONDS`
(default 5): every call in that window is a miss at once. So a hung Redis costs one request the
one timeout, not every request every call; after the window one call tries again.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache

from .cache_codec import CacheDecodeError

log = logging.getLogger("tavernkeep.cache")
_MISSING = object()
_last_warning = 0.0
_open_until = 0.0  # monotonic deadline: until then, the cache is not asked


def _breaker_seconds() -> float:
    return float(getattr(settings, "CACHE_BREAKER_SECONDS", 5))


def breaker_open() -> bool:
    """True while this process is not asking the cache (after a failure, for a while)."""
    return time.monotonic() < _open_until


def reset_breaker() -> None:
    global _open_until
    _open_until = 0.0


def _warn(operation: str, exc: Exception) -> None:
    global _last_warning, _open_until
    now = time.monotonic()
    if not isinstance(exc, CacheDecodeError):  # a bad value is one miss, not a sick Redis
        _open_until = now + _breaker_seconds()
    if now - _last_warning > 60:
        _last_warning = now
        log.warning("cache %s failed, falling back to the database: %s", operation, exc)


def cache_get(key: str, default: Any = None) -> Any:
    if breaker_open():
        return default
    try:
        return cache.get(key, default)
    except Exception as exc:  # any backend error is a miss
        _warn("get", exc)
        return default


def cache_get_many(keys: list[str]) -> dict[str, Any]:
    if breaker_open():
        return {}
    try:
        return cache.get_many(keys)
    except Exception as exc:
        _warn("get_many", exc)
        return {}


def cache_set(key: str, value: Any, timeout: float | None) -> bool:
    if breaker_open():
        return False
    try:
        cache.set(key, value, timeout)
        return True
    except Exception as exc:
        _warn("set", exc)
        return False


def cache_add(key: str, value: Any, timeout: float | None) -> bool:
    """Set `key` only when it is missing; False when it was there, or the cache is down."""
    if breaker_open():
        return False
    try:
        return bool(cache.add(key, value, timeout))
    except Exception as exc:
        _warn("add", exc)
        return False


def cache_set_many(values: dict[str, Any], timeout: float | None) -> bool:
    if breaker_open():
        return False
    try:
        cache.set_many(values, timeout)
        return True
    except Exception as exc:
        _warn("set_many", exc)
        return False


def cache_delete(*keys: str) -> bool:
    if breaker_open():
        return False
    try:
        cache.delete_many(list(keys))
        return True
    except Exception as exc:
        _warn("delete", exc)
        return False


def cache_incr(key: str, timeout: float) -> int | None:
    """Increment a counter that expires `timeout` seconds after it was created; None when the cache is down."""
    if breaker_open():
        return None
    try:
        if cache.add(key, 1, timeout):
            return 1
        return cache.incr(key)
    except ValueError:
        cache_set(key, 1, timeout)
        return 1
    except Exception as exc:
        _warn("incr", exc)
        return None
