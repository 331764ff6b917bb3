"""Fairness across servers inside one web process (issue 25).

Servers are tenants that may be hostile to each other. A web process runs a few requests at once
(`config.serve --threads`); without a bound, one server's expensive assemble or clean requests could
take every thread and the other servers' requests would wait behind them. `fair_share` lets each
server run at most `SERVER_CONCURRENT_WORK_PER_PROCESS` (default 2) of these requests at once in a
process; past that the request is answered at once with 429 and `Retry-After`, and the other
servers keep the remaining threads. Counters are per process (no shared state, no cache round trip).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

RETRY_AFTER_SECONDS = 1

_lock = threading.Lock()
_running: dict[int, int] = {}


def _limit() -> int:
    return max(1, int(getattr(settings, "SERVER_CONCURRENT_WORK_PER_PROCESS", 2)))


def _enter(server_id: int) -> bool:
    with _lock:
        if _running.get(server_id, 0) >= _limit():
            return False
        _running[server_id] = _running.get(server_id, 0) + 1
        return True


def _leave(server_id: int) -> None:
    with _lock:
        left = _running.get(server_id, 1) - 1
        if left > 0:
            _running[server_id] = left
        else:
            _running.pop(server_id, None)


def fair_share(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap an API view `view(request, server_id, ...)` (under `api_view`: the token is checked first)."""

    @wraps(view)
    def wrapper(request: HttpRequest, server_id: int, *args: Any, **kwargs: Any) -> HttpResponse:
        if not _enter(server_id):
            limit = _limit()
            response = JsonResponse(
                {
                    "error": f"This server already has {limit} assemble or clean request"
                    f"{'s' if limit != 1 else ''} running in this web process; retry in "
                    f"{RETRY_AFTER_SECONDS} s."
                },
                status=429,
            )
            response["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response
        try:
            return view(request, server_id, *args, **kwargs)
        finally:
            _leave(server_id)

    return wrapper
