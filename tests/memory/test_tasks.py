"""The beat task: registered under the name the schedule uses, and a thin shell over expiry."""

from __future__ import annotations

from django.conf import settings

from config.celery import app
from memory.models import StmEntry
from memory.tasks import expire_stm_entries


def test_the_beat_schedule_names_a_registered_task():
    app.loader.import_default_modules()
    scheduled = settings.CELERY_BEAT_SCHEDULE["expire-short-term-memory"]["task"]
    assert scheduled == "memory.tasks.expire_stm_entries"
    assert scheduled in app.tasks


def test_running_the_task_deletes_expired_entries_and_keeps_live_ones(store):
    store(600, hours_ago=13)
    store(601, hours_ago=11)
    assert expire_stm_entries() == 1
    assert list(StmEntry.objects.values_list("channel__discord_id", flat=True)) == [601]
