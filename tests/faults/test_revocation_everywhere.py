"""A token revoked by another process fails here at once, even when that process's copy to Redis
never arrived (issue 35, item 9): PostgreSQL tells every process about the bump.

The other process is real (`manage.py shell` in a subprocess, on the same test database) and writes
its cache under another key prefix, so nothing it publishes to Redis reaches this process: only the
database's notification can.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import timeit
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from servers import generational_cache, stamp_listener

from .conftest import assemble

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def listening(settings):
    settings.CACHE_STAMP_LISTENER = True
    yield
    stamp_listener.stop_listening()  # before the test database is dropped


def revoke_in_another_process(token_name: str) -> None:
    settings = connection.settings_dict
    url = (
        f"postgres://{settings['USER']}{':' + settings['PASSWORD'] if settings.get('PASSWORD') else ''}"
        f"@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}/{settings['NAME']}"
    )
    code = (
        "from core.actors import Agent\n"
        "from servers.models import ApiToken\n"
        "from servers.services import api_token_revoke\n"
        f"api_token_revoke(token=ApiToken.objects.get(name={token_name!r}), by=Agent('other'))\n"
    )
    env = {**os.environ, "DATABASE_URL": url, "CACHE_KEY_PREFIX": f"elsewhere-{os.getpid()}"}
    env.pop("TEST_DATABASE_NAME", None)
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True, timeout=120
    )


def test_a_token_revoked_by_another_process_fails_here_at_once(lamp_preset, api_token):
    if connection.vendor != "postgresql":
        pytest.skip("the notification needs PostgreSQL")
    client = Client()
    assert assemble(client, 1001, api_token).status_code == 200  # cached here: generation and answer
    assert stamp_listener.healthy.wait(5), "the listener did not connect"
    revoke_in_another_process("bot")
    started = time.monotonic()
    while assemble(client, 1001, api_token).status_code != 401:
        assert time.monotonic() - started < 1.0, "still accepted a second after the revocation"
        time.sleep(0.01)
    print(
        f"\nrevoked token refused {1000 * (time.monotonic() - started):.0f} ms after the other process returned"
    )


def test_the_per_request_generation_check_costs_under_a_tenth_of_a_millisecond(lamp_preset, api_token):
    if connection.vendor != "postgresql":
        pytest.skip("the notification needs PostgreSQL")
    assert assemble(Client(), 1001, api_token).status_code == 200
    key = generational_cache.generation_key("tokens", 1001)
    shared = generational_cache.cache_get(key)
    generational_cache.current_generation("tokens", 1001, shared)
    runs = 20_000
    seconds = min(
        timeit.repeat(
            lambda: generational_cache.current_generation("tokens", 1001, shared), number=runs, repeat=5
        )
    )
    per_call_us = seconds / runs * 1e6
    print(f"\ncurrent_generation with the listener: {per_call_us:.2f} µs per call")
    assert per_call_us < 100
