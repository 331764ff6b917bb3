"""A pool of web workers never exits while its parent lives (issue 50, item 5): granian's own
supervisor exited when a worker died twice within about 3 s ("crash loop detected"); config.serve
replaces each dead worker after a back-off, logs it, and keeps serving."""

from __future__ import annotations

import http.client
import os
import signal
import time
from pathlib import Path

import pytest

from config.serve import backoff_seconds
from devtools.web_process import free_port, start_server, stop_server, wait_until_up

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="lists workers from /proc (Linux)"
)


def _workers(parent: int) -> set[int]:
    """The parent's live child processes (its workers)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == parent and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def _healthy(port: int) -> bool:
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except OSError:
        return False


def _wait(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_the_back_off_doubles_from_half_a_second_to_at_most_thirty():
    assert [backoff_seconds(n) for n in (1, 2, 3, 4, 7, 20)] == [0.5, 1.0, 2.0, 4.0, 30.0, 30.0]


def test_a_pool_whose_workers_keep_dying_keeps_serving(tmp_path):
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path}/pool.sqlite3",
        "DEBUG": "0",
        "SECURE_HTTPS": "0",
    }
    env.pop("REDIS_URL", None)
    log_path = tmp_path / "serve.log"
    with log_path.open("w") as log:
        server = start_server(port, workers=2, env=env, stderr=log)
        try:
            wait_until_up(port, time.monotonic() + 90)
            assert _wait(lambda: len(_workers(server.pid)) == 2, 60)
            victim = min(_workers(server.pid))
            for _ in range(4):  # each replacement killed as soon as it is up: granian gave up at the second
                before = _workers(server.pid)
                os.kill(victim, signal.SIGKILL)
                assert _wait(lambda before=before: len(_workers(server.pid) - before) == 1, 30), (
                    "no new worker"
                )
                assert server.poll() is None, "the pool exited"
                assert _healthy(port)
                (victim,) = _workers(server.pid) - before
            assert server.poll() is None
        finally:
            stop_server(server)
    logged = log_path.read_text()
    assert logged.count("died; starting a new one in") == 4, logged[-2000:]
    assert "crash loop" not in logged.lower()
