"""Start a real Celery worker against the test database, for tests that need one (real-services pass)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def worker_database_url() -> str:
    """DATABASE_URL naming pytest-django's test database, so the worker sees the test's rows."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + connection.settings_dict["NAME"]))


def start_worker(queue: str, *, capture_output: bool = False) -> subprocess.Popen:
    """A solo-pool worker consuming only `queue` (unique per test, so tests never share a worker)."""
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
            "--without-heartbeat",
            "--without-mingle",
            "--without-gossip",
            "--loglevel=warning",
        ],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": worker_database_url()},
        stdout=output,
        stderr=subprocess.STDOUT if capture_output else subprocess.DEVNULL,
        text=True,
    )
