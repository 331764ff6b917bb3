"""A Celery worker killed in the middle of STM expiry: running the task again finishes the job, and no
live entry is ever deleted."""

from __future__ import annotations

import os
import signal
import time
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from devtools.celery_worker import start_worker
from memory.models import DiscordUser, StmEntry
from memory.tasks import expire_stm_entries
from servers.models import Channel

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

EXPIRED = 40_000  # 20 batches of 2,000: long enough to kill the worker between two of them
LIVE = 300


def _fill(lantern) -> None:
    channel = Channel.objects.create(discord_id=880_001, owner=lantern, server=lantern, name="tavern")
    user = DiscordUser.objects.create(id=880_002)
    old, fresh = timezone.now() - timedelta(hours=30), timezone.now() - timedelta(hours=1)
    rows = [
        StmEntry(
            owner=lantern, server=lantern, channel=channel, user=user, lineage=f"old-{i}", updated_at=old
        )
        for i in range(EXPIRED)
    ]
    rows += [
        StmEntry(
            owner=lantern, server=lantern, channel=channel, user=user, lineage=f"live-{i}", updated_at=fresh
        )
        for i in range(LIVE)
    ]
    StmEntry.objects.bulk_create(rows, batch_size=5000)


def test_a_worker_killed_mid_expiry_leaves_live_entries_and_a_rerun_finishes(lantern):
    _fill(lantern)
    live_ids = set(StmEntry.objects.filter(lineage__startswith="live-").values_list("id", flat=True))
    total = EXPIRED + LIVE
    queue = f"stm-kill-{uuid.uuid4().hex[:8]}"
    worker = start_worker(queue)
    try:
        expire_stm_entries.apply_async(queue=queue)
        deadline = time.monotonic() + 60
        while StmEntry.objects.count() == total and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(worker.pid, signal.SIGKILL)  # mid-job: between batches or inside one
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(timeout=10)
        connection.close()
    left = StmEntry.objects.count()
    assert LIVE < left < total, "the kill should land while expired entries remain"
    assert set(StmEntry.objects.filter(lineage__startswith="live-").values_list("id", flat=True)) == live_ids

    assert expire_stm_entries() == left - LIVE  # the rerun deletes exactly what was left over
    assert set(StmEntry.objects.values_list("id", flat=True)) == live_ids
    assert expire_stm_entries() == 0  # and a third run finds nothing
