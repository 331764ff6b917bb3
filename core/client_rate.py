"""Each signed-in browser's rate of page requests in one web process (docs/reliability.md#5c-hostile-neighbours-round-two-issue-35).

A server's share (core/fairness.py) is decided only once the request is known to be allowed on the
server: the session, the user and the membership are read first, so that a stranger's requests never
spend another server's share. That reading is a few milliseconds of the process's time, and a client
that retries the moment it is refused (a script, not a person) can spend a process's time on it
hundreds of times a second while every answer it gets is a 429.

So, before any of that, each session's requests are metered on their own: a bucket of
`CLIENT_BURST` requests that refills at `CLIENT_REQUESTS_PER_SECOND`, per session cookie, per
process. Past it the answer is a short 429 with `Retry-After`, made without reading the session,
the database or a template. Requests without a session cookie are left to the sign-in throttle
(core/login_throttle.py): behind a proxy they would all share one address. The bot's API has its own
chain (config/wsgi.py) and its token's share, and never passes here.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse

RETRY_AFTER_SECONDS = 1
_KEPT = 4096  # sessions remembered per process; the least recently seen is forgotten first
BUSY = (
    "<!doctype html><title>Too many requests</title>"
    "<p>This browser sent more requests than a person clicks; wait a second and try again.</p>"
)


class Buckets:
    """Token buckets per key in one process: a burst of `burst()` that refills at `rate()` a second.
    At most `kept` keys are remembered (the least recently seen is forgotten first, which gives it a
    full bucket again: a flood of new keys cannot grow the process)."""

    def __init__(self, *, rate: Callable[[], float], burst: Callable[[], float], kept: int = _KEPT) -> None:
        self.rate, self.burst, self.kept = rate, burst, kept
        self._lock = threading.Lock()
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key → (left, when)

    def take(self, key: str, now: float, *, spend: bool = True) -> bool:
        """Spend one of `key`'s bucket (only look, with `spend=False`); False when it is empty."""
        rate, burst = self.rate(), self.burst()
        with self._lock:
            left, at = self._buckets.pop(key, (burst, now))
            left = min(burst, left + (now - at) * rate)
            allowed = left >= 1.0
            self._buckets[key] = (left - 1.0 if allowed and spend else left, now)
            if len(self._buckets) > self.kept:
                self._buckets.popitem(last=False)
        return allowed

    def forget(self) -> None:
        """Every bucket emptied of its history (tests)."""
        with self._lock:
            self._buckets.clear()


def _rate() -> float:
    return float(getattr(settings, "CLIENT_REQUESTS_PER_SECOND", 30.0))


def _burst() -> float:
    return float(getattr(settings, "CLIENT_BURST", 120.0))


_sessions = Buckets(rate=_rate, burst=_burst)


def take(key: str, now: float) -> bool:
    """Spend one request of session `key`'s bucket; False when it is empty."""
    return _sessions.take(key, now)


def _account_rate() -> float:
    return float(getattr(settings, "ACCOUNT_REQUESTS_PER_SECOND", 60.0))


def _account_burst() -> float:
    return float(getattr(settings, "ACCOUNT_BURST", 240.0))


# The same per signed-in account, across its sessions (at most SESSIONS_PER_ACCOUNT of them).
_accounts = Buckets(rate=_account_rate, burst=_account_burst)


def forget() -> None:
    """Every session's and account's bucket emptied of its history (tests)."""
    _sessions.forget()
    _accounts.forget()


def _busy() -> HttpResponse:
    response = HttpResponse(BUSY, status=429)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class AccountRateMiddleware:
    """429 for an account past its rate, however many sessions it spreads its requests over; after
    the session and the user are read (one account's requests cost that much more than a cookie's)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        try:
            signed_in = user is not None and user.is_authenticated
        except (OperationalError, InterfaceError):
            # The database is down: the view reads the user again and the maintenance page answers.
            return self.get_response(request)
        if signed_in and user is not None and not _accounts.take(str(user.pk), time.monotonic()):
            return _busy()
        return self.get_response(request)


class ClientRateMiddleware:
    """429 for a session past its rate, before the session is read."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
        if key and not take(key, time.monotonic()):
            return _busy()
        return self.get_response(request)
