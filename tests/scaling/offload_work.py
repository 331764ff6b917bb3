"""Work for tests/scaling/test_offload.py to hand to a child process (core/offload.py imports a
piece of work by its module and name, so it lives in a module of its own)."""

from __future__ import annotations

import os
import time


def burn(*, seconds: float) -> int:
    """Keep a processor busy for `seconds` of CPU time; the pid of the process that did."""
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass
    return os.getpid()


def refuse(*, message: str) -> None:
    raise LookupError(message)


def hold_until(*, path: str) -> int:
    """Hold the child until `path` exists (a test says when the work is done; a minute at most)."""
    until = time.monotonic() + 60
    while not os.path.exists(path) and time.monotonic() < until:
        time.sleep(0.01)
    return os.getpid()


def tables_loaded() -> bool:
    """Whether this process has the token tables loaded (a child's warm-up loads them)."""
    from engine import tokens

    return tokens._encoder.cache_info().currsize > 0
