"""Start a real Celery worker against the test database, for tests that need one (real-services pass)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def worker_database_url() -> str:
    """DATABASE_URL naming pytest-django's test database, so the worker sees the test's rows."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + connection.settings_dict["NAME"]))


def start_worker(
    queue: str, *, capture_output: bool = False, name: str | None = None, loglevel: str = "warning"
) -> subprocess.Popen:
    """A solo-pool worker consuming only `queue` (unique per test, so tests never share a worker).

    Give several workers on one queue distinct `name`s (a full node name, `something@host`).
    """
    output = subprocess.PIPE if capture_output else subprocess.DEVNULL
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "-Q",
            queue,
            *(["-n", name] if name else []),
            "--without-heartbeat",
            "--without-mingle",
            "--without-gossip",
            f"--loglevel={loglevel}",
        ],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": worker_database_url(), "LOG_LEVEL": loglevel.upper()},
        stdout=output,
        stderr=subprocess.STDOUT if capture_output else subprocess.DEVNULL,
        text=True,
    )


def wait_until_ready(*names: str, seconds: float = 60) -> None:
    """Return once every named worker answers a ping over the broker; RuntimeError after `seconds`."""
    from config.celery import app

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        replies = app.control.ping(destination=list(names), timeout=0.5)
        if {name for reply in replies for name in reply} >= set(names):
            return
    raise RuntimeError(f"workers {', '.join(names)} did not answer in {seconds:.0f} s")


def stop_worker(worker: subprocess.Popen) -> str:
    """Stop the worker (warm shutdown, killed after 15 s); what it printed, when captured."""
    worker.terminate()
    try:
        output, _ = worker.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        worker.kill()
        output, _ = worker.communicate(timeout=5)
    return output or ""
