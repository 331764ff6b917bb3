"""A real Celery worker, on the real Redis broker, runs the beat task against the test database."""

from __future__ import annotations

import subprocess
import time
import uuid

import pytest
from django.db import connection

from devtools.celery_worker import start_worker
from memory.models import StmEntry
from memory.tasks import expire_stm_entries

WAIT_SECONDS = 60


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_deletes_expired_entries_and_keeps_live_ones(store):
    for channel in range(600, 610):
        store(channel, hours_ago=13)
    store(700, hours_ago=1)
    store(701, hours_ago=20, summary="a summary lives 24 hours")
    queue = f"stm-test-{uuid.uuid4().hex[:8]}"
    worker = start_worker(queue, capture_output=True)
    try:
        expire_stm_entries.apply_async(queue=queue)
        deadline = time.monotonic() + WAIT_SECONDS
        while StmEntry.objects.count() > 2 and time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.25)
        assert worker.poll() is None, worker.stdout.read() if worker.stdout else ""
        assert set(StmEntry.objects.values_list("channel__discord_id", flat=True)) == {700, 701}
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=5)
        connection.close()
