"""The project's WSGI application for bench/api_overhead.py, with the engine's own time of each
request sent back in an `X-Bench-Engine-Us` header, so that the bench subtracts each request's own
engine time from its latency (the time beyond the engine, request by request, at p50 and p99).

Served through `python -m config.serve --app bench.wsgi_timed:application`: the same warm-up, the
same application (config.wsgi), only `assembly.api.assemble_for_server` timed around it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import assembly.api
from config.wsgi import application as project_application

_engine_ns = [0]
_assemble_for_server = assembly.api.assemble_for_server


def _timed(*args: Any, **kwargs: Any) -> Any:
    started = time.perf_counter_ns()
    try:
        return _assemble_for_server(*args, **kwargs)
    finally:
        _engine_ns[0] += time.perf_counter_ns() - started


assembly.api.assemble_for_server = _timed


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    _engine_ns[0] = 0

    def start(status: str, headers: list[tuple[str, str]], *rest: Any) -> Any:
        return start_response(status, [*headers, ("X-Bench-Engine-Us", str(_engine_ns[0] // 1000))], *rest)

    return project_application(environ, start)
