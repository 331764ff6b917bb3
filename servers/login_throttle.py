"""Login throttling: a bounded number of failed sign-ins per username and per address in 15 minutes."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.http import HttpRequest

from .resilient_cache import cache_delete, cache_get, cache_incr

WINDOW_SECONDS = 15 * 60


def _keys(request: HttpRequest, username: str) -> list[str]:
    address = request.META.get("REMOTE_ADDR", "")
    user_hash = hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]
    return [f"login-fail:user:{user_hash}", f"login-fail:addr:{address}"]


def is_locked_out(request: HttpRequest, username: str) -> bool:
    limit = settings.LOGIN_ATTEMPTS_PER_15_MINUTES
    return any((cache_get(key) or 0) >= limit for key in _keys(request, username))


def note_failure(request: HttpRequest, username: str) -> None:
    for key in _keys(request, username):
        cache_incr(key, WINDOW_SECONDS)


def note_success(request: HttpRequest, username: str) -> None:
    cache_delete(_keys(request, username)[0])
