"""gunicorn serving this checkout on a loopback port: the one way the load benchmarks and the
two-instance tests (tests/scaling) start, wait for and stop it.

Imports nothing from the project, so a test can import it as `bench.gunicorn_process` and a bench
script beside it as `gunicorn_process`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable  # the interpreter running us: its environment has gunicorn and the project's packages


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_gunicorn(port: int, *, workers: int, env: dict[str, str]) -> subprocess.Popen:
    """gunicorn serving the project on 127.0.0.1:`port`, in its own process group (so it can be stopped whole)."""
    return subprocess.Popen(
        [
            PYTHON,
            "-m",
            "gunicorn",
            "config.wsgi",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            str(workers),
            "--log-level",
            "warning",
        ],
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )


def wait_until_up(port: int, deadline: float) -> None:
    """Return once something accepts connections on 127.0.0.1:`port`; RuntimeError at `deadline` (monotonic)."""
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not start on port {port} in time")


def stop_gunicorn(server: subprocess.Popen, *, sig: int = signal.SIGTERM) -> None:
    """Stop the whole process group (master and workers) and wait for the master."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, sig)
    server.wait(timeout=30)
