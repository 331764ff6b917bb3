"""A real Celery worker, on the real Redis broker, runs the beat task against the test database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connection

from memory.models import StmEntry
from memory.tasks import expire_stm_entries

ROOT = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 60


def test_database_url() -> str:
    """DATABASE_URL pointing at pytest-django's test database, so the worker sees the test's rows."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + connection.settings_dict["NAME"]))


test_database_url.__test__ = False  # a helper, not a test


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_deletes_expired_entries_and_keeps_live_ones(store):
    for channel in range(600, 610):
        store(channel, hours_ago=13)
    store(700, hours_ago=1)
    store(701, hours_ago=20, summary="a summary lives 24 hours")
    queue = f"stm-test-{uuid.uuid4().hex[:8]}"
    worker = subprocess.Popen(
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
        env={**os.environ, "DATABASE_URL": test_database_url()},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        expire_stm_entries.apply_async(queue=queue)
        deadline = time.monotonic() + WAIT_SECONDS
        while StmEntry.objects.count() > 2 and time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.25)
        assert worker.poll() is None, worker.stdout.read() if worker.stdout else ""
        assert set(StmEntry.objects.values_list("channel_id", flat=True)) == {700, 701}
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=5)
        connection.close()
