"""Celery tasks for short-term memory: thin shells over services."""

from __future__ import annotations

import logging

from celery import shared_task

from . import services

logger = logging.getLogger(__name__)


@shared_task(name="memory.tasks.expire_stm_entries", ignore_result=True)
def expire_stm_entries() -> int:
    """Delete expired STM entries (the beat schedule runs this); returns how many were deleted."""
    report = services.expire_entries()
    if report.deleted:
        logger.info("expired %d short-term memory entries in %d batches", report.deleted, report.batches)
    return report.deleted
