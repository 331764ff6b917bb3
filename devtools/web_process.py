"""The project's web server (`python -m config.serve`) on a loopback port: the one way the load
benchmarks, the screenshots and the two-instance tests (tests/scaling) start, wait for and stop it.

Imports nothing from the project: the server runs in its own process.
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
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
PYTHON = (
    sys.executable
)  # the interpreter running us: its environment has the server and the project's packages


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    port: int,
    *,
    workers: int,
    env: dict[str, str],
    threads: int = 1,
    nice: int = 0,
    stderr: IO[str] | None = None,
    app: str | None = None,
) -> subprocess.Popen:
    """The project served on 127.0.0.1:`port`, in its own process group (so it can be stopped whole);
    `nice` lowers its CPU priority (config.serve --nice); its log goes to `stderr` when given; `app`
    serves another WSGI application the same way (config.serve --app)."""
    return subprocess.Popen(
        [
            PYTHON,
            "-m",
            "config.serve",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            *(["--nice", str(nice)] if nice else []),
            *(["--app", app] if app else []),
        ],
        env=env,
        cwd=ROOT,
        stderr=stderr,
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
    raise RuntimeError(f"the web server did not start on port {port} in time")


def stop_server(server: subprocess.Popen, *, sig: int = signal.SIGTERM) -> None:
    """Stop the whole process group (the parent and its workers) and wait for the parent."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, sig)
    server.wait(timeout=30)
