"""The Django cache, with backend failures turned into misses.

Redis is an accelerator, never a dependency: when it is down, callers fall back to the database
and a warning is logged (once a minute at most, so a dead Redis does not flood the log).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.core.cache import cache

log = logging.getLogger("tavernkeep.cache")
_MISSING = object()
_last_warning = 0.0


def _warn(operation: str, exc: Exception) -> None:
    global _last_warning
    now = time.monotonic()
    if now - _last_warning > 60:
        _last_warning = now
        log.warning("cache %s failed, falling back to the database: %s", operation, exc)


def cache_get(key: str, default: Any = None) -> Any:
    try:
        return cache.get(key, default)
    except Exception as exc:  # any backend error is a miss
        _warn("get", exc)
        return default


def cache_get_many(keys: list[str]) -> dict[str, Any]:
    try:
        return cache.get_many(keys)
    except Exception as exc:
        _warn("get_many", exc)
        return {}


def cache_set(key: str, value: Any, timeout: float | None) -> bool:
    try:
        cache.set(key, value, timeout)
        return True
    except Exception as exc:
        _warn("set", exc)
        return False


def cache_set_many(values: dict[str, Any], timeout: float | None) -> bool:
    try:
        cache.set_many(values, timeout)
        return True
    except Exception as exc:
        _warn("set_many", exc)
        return False


def cache_delete(*keys: str) -> bool:
    try:
        cache.delete_many(list(keys))
        return True
    except Exception as exc:
        _warn("delete", exc)
        return False


def cache_incr(key: str, timeout: float) -> int | None:
    """Increment a counter that expires `timeout` seconds after it was created; None when the cache is down."""
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
