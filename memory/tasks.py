"""Celery tasks for short-term memory: thin shells over services."""

from __future__ import annotations

import logging

from celery import Task, shared_task
from django.conf import settings

from . import services

logger = logging.getLogger(__name__)


@shared_task(name="memory.tasks.expire_stm_entries", ignore_result=True, bind=True)
def expire_stm_entries(self: Task, helpers: int | None = None, batch_size: int = 2000) -> int:
    """Delete expired STM entries (the beat schedule runs this); returns how many this task deleted.

    A large backlog is drained by several workers at once: run from a worker, the task first queues
    `helpers` copies of itself (STM_EXPIRY_PARALLEL - 1 by default) on its own queue, each without
    helpers of its own. Their batches never overlap (services.expire_entries skips rows another
    transaction holds), so nothing is deleted twice and nothing live is deleted.
    """
    helpers = settings.STM_EXPIRY_PARALLEL - 1 if helpers is None else helpers
    if helpers > 0 and not (self.request.called_directly or self.request.is_eager):
        queue = (self.request.delivery_info or {}).get("routing_key")
        for _ in range(helpers):
            expire_stm_entries.apply_async(kwargs={"helpers": 0, "batch_size": batch_size}, queue=queue)
    report = services.expire_entries(batch_size=batch_size)
    if report.deleted:
        logger.info("expired %d short-term memory entries in %d batches", report.deleted, report.batches)
    return report.deleted
