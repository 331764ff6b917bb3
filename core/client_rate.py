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

Issue 50: a session refused for its account's rate, or for its server's share of the process, is
noted; until the account's bucket holds a request again, or for as long as the share's refusal holds,
that session's next requests (for that server's pages) are answered here too, before the session,
the account and the membership are read (docs/reliability.md#the-refusals-remembered-item-2). These
429s are counted in one log line per interval instead of one line each.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse

RETRY_AFTER_SECONDS = 1
SERVER_PATH = "/servers/"  # the dashboard's pages of one server (servers/urls.py and the apps')
logger = logging.getLogger("tavernkeep.refusals")
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


class Notes:
    """What sessions were last refused for, in one process, so that their next requests are answered
    before the session, the account and the membership are read again: the account a session's
    requests were refused for, and until when a server's share refuses a session's pages. At most
    `kept` sessions are remembered (the least recently noted is forgotten first). A note only ever
    refuses, and only a session that was refused the same way a moment before."""

    def __init__(self, *, kept: int = _KEPT) -> None:
        self.kept = kept
        self._lock = threading.Lock()
        self._accounts: OrderedDict[str, str] = OrderedDict()  # session key → account key
        self._servers: OrderedDict[tuple[str, int], float] = OrderedDict()  # (session, server) → until

    def note_account(self, key: str, account: str) -> None:
        with self._lock:
            self._accounts[key] = account
            self._accounts.move_to_end(key)
            if len(self._accounts) > self.kept:
                self._accounts.popitem(last=False)

    def note_server(self, key: str, server_id: int, until: float) -> None:
        with self._lock:
            self._servers[(key, server_id)] = until
            self._servers.move_to_end((key, server_id))
            if len(self._servers) > self.kept:
                self._servers.popitem(last=False)

    def refuses(self, key: str, path: str, now: float) -> bool:
        """Whether the session's account is still past its rate, or the server its path names
        still refuses it."""
        server_id = server_in(path)
        with self._lock:
            account = self._accounts.get(key)
            until = self._servers.get((key, server_id), 0.0) if server_id is not None else 0.0
        return until > now or (account is not None and not _accounts.take(account, now, spend=False))

    def forget(self) -> None:
        with self._lock:
            self._accounts.clear()
            self._servers.clear()


_notes = Notes()


def server_in(path: str) -> int | None:
    """The server a dashboard path is about (`/servers/<id>/...`), read without resolving the URL."""
    if not path.startswith(SERVER_PATH):
        return None
    head = path[len(SERVER_PATH) :].split("/", 1)[0]
    return int(head) if head.isdigit() and len(head) <= 20 else None


def note_server_refused(request: HttpRequest, server_id: int, holds: float) -> None:
    """The server's share refused this browser's page and will for `holds` seconds (core/fairness.py):
    its next pages of that server until then are answered before its session is read."""
    key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    if key and holds > 0:
        _notes.note_server(key, server_id, time.monotonic() + holds)


def forget() -> None:
    """Every session's and account's bucket emptied of its history (tests)."""
    _sessions.forget()
    _accounts.forget()
    _notes.forget()


class _RefusalLog:
    """One log line per interval for the refusals of every browser, not one per refusal: a client
    that retries the moment it is refused would otherwise write hundreds of lines a second."""

    def __init__(self, *, every: float = 10.0) -> None:
        self.every = every
        self._lock = threading.Lock()
        self._count = 0
        self._since = time.monotonic()

    def count(self) -> None:
        now = time.monotonic()
        with self._lock:
            self._count += 1
            if now - self._since < self.every:
                return
            count, since = self._count, self._since
            self._count, self._since = 0, now
        logger.warning("%d page requests answered 429 (too many) in the last %.0f s", count, now - since)


_refusal_log = _RefusalLog()


def counted_refusal(response: HttpResponse) -> HttpResponse:
    """A 429 of the dashboard's limits, counted in the summary line instead of logged on its own."""
    response._has_been_logged = True  # type: ignore[attr-defined]  # Django's own log skips it
    _refusal_log.count()
    return response


def _busy() -> HttpResponse:
    response = HttpResponse(BUSY, status=429)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return counted_refusal(response)


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
            key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
            if key:
                _notes.note_account(key, str(user.pk))
            return _busy()
        return self.get_response(request)


class ClientRateMiddleware:
    """429 for a session past its rate, before the session is read."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
        if key:
            now = time.monotonic()
            if _notes.refuses(key, request.path_info, now) or not take(key, now):
                return _busy()
        return self.get_response(request)
