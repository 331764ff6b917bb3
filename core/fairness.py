"""Fairness across servers inside one web process (issue 25).

Servers are tenants that may be hostile to each other. A web process runs a few requests at once
(`config.serve --threads`); without a bound, one server's expensive assemble or clean requests could
take every thread and the other servers' requests would wait behind them. `fair_share` lets each
server run at most `SERVER_CONCURRENT_WORK_PER_PROCESS` (default 2) of these requests at once in a
process; past that the request is answered at once with 429 and `Retry-After`, and the other
servers keep the remaining threads. Counters are per process (no shared state, no cache round trip).

Issue 35: every page and API call that does work for a server counts toward that server's share,
not only assemble and clean. `ServerShareMiddleware` opens a claim for each request; the claim is
taken once the request is known to be allowed on the server (`servers.permissions.get_server_for`
for pages, `api_view` for the API), so a stranger's requests never use up another server's share.
Past the limit a page answers 429 with a "busy, try again" page and the API its JSON 429.

On top of the count, a server's CPU is metered: each claimed request's thread CPU time is charged
to its server, which earns `SERVER_CPU_SHARE` CPU-seconds per second back (a bucket holding at most
`SERVER_CPU_BURST_SECONDS`). A server whose bucket is empty is answered 429 until it refills, so
one server's expensive pages (preview renders, a huge preset, the regex tester) cannot keep a
process's CPU from the others for long. Those pages compute in a child process (core/offload.py),
whose CPU time is charged to the request's server the same way (`charge_elsewhere`).

Issue 50, item 10: the CPU meter protects neighbours, so it refuses only when there is one. A server
whose bucket is empty is refused only while another server has asked this process for its share
within the last `SERVER_CPU_NEIGHBOUR_SECONDS` (2); alone, it is served (the processor would
otherwise sit idle), and its debt is kept to one burst, so a neighbour who arrives finds it
refused for a moment (a burst's refill, 2 s by default), not for minutes of debt. Before, a bot sending assemblies one after another to an idle
API worker, whose thread used more than half a processor, was answered 429 by its own share.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from core import client_rate

RETRY_AFTER_SECONDS = 1

_lock = threading.Lock()
_running: dict[int, int] = {}


def _limit() -> int:
    return max(1, int(getattr(settings, "SERVER_CONCURRENT_WORK_PER_PROCESS", 2)))


def _cpu_share() -> float:
    return float(getattr(settings, "SERVER_CPU_SHARE", 0.5))


def _cpu_burst() -> float:
    return float(getattr(settings, "SERVER_CPU_BURST_SECONDS", 1.0))


def _neighbour_seconds() -> float:
    return float(getattr(settings, "SERVER_CPU_NEIGHBOUR_SECONDS", 2.0))


_SEEN_KEPT = 1024  # servers remembered as recent neighbours; older ones are forgotten past it
_seen: dict[int, float] = {}  # server → when it last asked this process for its share


def _see(server_id: int, now: float) -> None:
    _seen[server_id] = now
    if len(_seen) > _SEEN_KEPT:
        horizon = now - _neighbour_seconds()
        for other in [other for other, at in _seen.items() if at < horizon]:
            del _seen[other]


def _has_neighbour(server_id: int, now: float) -> bool:
    """Whether another server asked this process for its share lately, or has a request running."""
    horizon = now - _neighbour_seconds()
    return any(other != server_id and at >= horizon for other, at in _seen.items()) or any(
        other != server_id for other in _running
    )


_credit: dict[int, tuple[float, float]] = {}  # server → (CPU-seconds left, when last refilled)


def _credit_now(server_id: int, now: float) -> float:
    left, at = _credit.get(server_id, (_cpu_burst(), now))
    return min(_cpu_burst(), left + (now - at) * _cpu_share())


def _charge(server_id: int, cpu_seconds: float) -> None:
    with _lock:
        now = time.monotonic()
        left = _credit_now(server_id, now) - cpu_seconds
        if not _has_neighbour(server_id, now):
            left = max(-_cpu_burst(), left)  # alone, it took nobody's time: its debt stays small
        _credit[server_id] = (left, now)


def _enter(server_id: int, *, counted: bool = True) -> float | None:
    """None once the request holds its place; else the seconds the refusal holds for certain (the
    refill of a spent CPU bucket; 0 for the concurrency cap, which a finishing request frees)."""
    with _lock:
        now = time.monotonic()
        _see(server_id, now)
        if counted and _running.get(server_id, 0) >= _limit():
            return 0.0
        credit = _credit_now(server_id, now)
        if credit <= 0 and _has_neighbour(server_id, now):
            return min(float(RETRY_AFTER_SECONDS), -credit / max(_cpu_share(), 1e-9))
        if counted:
            _running[server_id] = _running.get(server_id, 0) + 1
        return None


class ServerBusy(Exception):
    """The server has used its share of this web process; answered 429. `holds`: the seconds the
    refusal holds for certain (core/client_rate.py answers the same browser's next requests for
    this server before reading its session until then)."""

    def __init__(self, server_id: int, holds: float = 0.0) -> None:
        super().__init__(f"server {server_id} is busy")
        self.server_id = server_id
        self.holds = holds


# Each claim: the server, the thread's CPU time when it was taken, and whether it holds one of the
# server's places (a light read does not).
_claims: ContextVar[list[tuple[int, float, bool]] | None] = ContextVar("server_share_claims", default=None)
_light: ContextVar[bool] = ContextVar("server_share_light", default=False)


def light_share(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Mark a cheap read (a card's image): it is charged the CPU it uses but takes none of the
    server's places, so the images of one page never crowd each other out with 429s."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> HttpResponse:
        token = _light.set(True)
        try:
            return view(*args, **kwargs)
        finally:
            _light.reset(token)

    return wrapper


def claim_share(server_id: int) -> None:
    """Count the current request toward `server_id`'s share (once); ServerBusy past it. Outside a
    request (the command line, a Celery task) there is nothing to share and nothing is counted."""
    claims = _claims.get()
    if claims is None or any(held == server_id for held, _, _ in claims):
        return
    counted = not _light.get()
    holds = _enter(server_id, counted=counted)
    if holds is not None:
        raise ServerBusy(server_id, holds)
    claims.append((server_id, time.thread_time(), counted))


def charge_elsewhere(cpu_seconds: float) -> None:
    """Charge the current request's servers CPU it used outside its own thread (core/offload.py's
    child processes), on top of the thread's own time; nothing outside a request."""
    claims = _claims.get()
    if not claims or cpu_seconds <= 0:
        return
    claims[:] = [
        (server_id, cpu_at_start - cpu_seconds, counted) for server_id, cpu_at_start, counted in claims
    ]


def current_servers() -> tuple[int, ...]:
    """The servers the current request has claimed so far (none outside a request)."""
    return tuple(server_id for server_id, _, _ in _claims.get() or ())


def busy_message() -> str:
    limit = _limit()
    return (
        f"This server already has {limit} request{'s' if limit != 1 else ''} running in this web "
        f"process, or has used its share of the processor; retry in {RETRY_AFTER_SECONDS} s."
    )


def busy_json() -> JsonResponse:
    response = JsonResponse({"error": busy_message()}, status=429)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class ServerShareMiddleware:
    """Opens the request's claim and gives back what it took, charging the CPU it used."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        claims: list[tuple[int, float, bool]] = []
        token = _claims.set(claims)
        try:
            return self.get_response(request)
        finally:
            _claims.reset(token)
            _give_back(claims)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, ServerBusy):
            return None
        if request.path.startswith("/api/"):
            return busy_json()
        client_rate.note_server_refused(request, exception.server_id, exception.holds)
        body = render_to_string("busy.html", {"message": busy_message()}, request=request)
        response = HttpResponse(body, status=429)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return client_rate.counted_refusal(response)


def _give_back(claims: list[tuple[int, float, bool]]) -> None:
    """Charge each claim's server the CPU the request used, and free the places it held."""
    for server_id, cpu_at_start, counted in claims:
        _charge(server_id, time.thread_time() - cpu_at_start)
        if counted:
            _leave(server_id)


def _leave(server_id: int) -> None:
    with _lock:
        left = _running.get(server_id, 1) - 1
        if left > 0:
            _running[server_id] = left
        else:
            _running.pop(server_id, None)


def fair_share(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap an API view `view(request, server_id, ...)` (under `api_view`: the token is checked
    first). `api_view` already claims the share for every API call; this keeps the claim for views
    called outside the middleware too (a test calling the view directly)."""

    @wraps(view)
    def wrapper(request: HttpRequest, server_id: int, *args: Any, **kwargs: Any) -> HttpResponse:
        if _claims.get() is not None:
            try:
                claim_share(server_id)
            except ServerBusy:
                return busy_json()
            return view(request, server_id, *args, **kwargs)
        token = _claims.set([])
        try:
            try:
                claim_share(server_id)
            except ServerBusy:
                return busy_json()
            return view(request, server_id, *args, **kwargs)
        finally:
            _give_back(_claims.get() or [])
            _claims.reset(token)

    return wrapper
