"""Login throttling: a bounded number of failed sign-ins per (username, address) and per address in
15 minutes, never per username alone: an outsider who knows alice's name can lock only their own
address out, never alice at hers (issue 25).

The counters live in the shared cache (Redis in production), so every web process on every
machine counts the same failures.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.http import HttpRequest

from .resilient_cache import cache_delete, cache_get, cache_incr

WINDOW_SECONDS = 15 * 60


def client_address(request: HttpRequest) -> str:
    """The address a request came from.

    Behind our reverse proxy (BEHIND_PROXY) every request arrives from the proxy, so the address is
    the last X-Forwarded-For entry: the one the proxy wrote itself (entries before it are whatever
    the client sent). Counting the proxy's own address would lock everyone out together.
    """
    if settings.BEHIND_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").rsplit(",", 1)[-1].strip()
        if forwarded:
            return forwarded
    return request.META.get("REMOTE_ADDR", "")


def _keys(request: HttpRequest, username: str) -> list[str]:
    """The (username, address) counter, then the address's own."""
    address = client_address(request)
    pair = hashlib.sha256(f"{username.strip().lower()}\n{address}".encode()).hexdigest()[:32]
    return [f"login-fail:pair:{pair}", f"login-fail:addr:{address}"]


def is_locked_out(request: HttpRequest, username: str) -> bool:
    pair_key, address_key = _keys(request, username)
    return (cache_get(pair_key) or 0) >= settings.LOGIN_ATTEMPTS_PER_15_MINUTES or (
        cache_get(address_key) or 0
    ) >= settings.LOGIN_ATTEMPTS_PER_ADDRESS_PER_15_MINUTES


def note_failure(request: HttpRequest, username: str) -> None:
    for key in _keys(request, username):
        cache_incr(key, WINDOW_SECONDS)


def note_success(request: HttpRequest, username: str) -> None:
    cache_delete(_keys(request, username)[0])
