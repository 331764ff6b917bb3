"""Celery tasks for channel conversations: thin shells over services (docs/channels.md#retention-and-forgetting)."""

from __future__ import annotations

import logging

from celery import shared_task

from .channels import services

logger = logging.getLogger(__name__)


@shared_task(name="conversations.tasks.expire_channel_messages", ignore_result=True)
def expire_channel_messages() -> int:
    """Drop the stored channel messages past each server's limits (the beat schedule runs this)."""
    removed = services.expire_messages()
    if removed:
        logger.info("expired %d stored channel messages", removed)
    return removed
