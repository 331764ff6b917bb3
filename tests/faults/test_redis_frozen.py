"""A hung Redis (SIGSTOP) costs a request at most the one timeout (issue 35, item 4).

A redis-server of the test's own is frozen for real; the suite's Redis is never touched. With it
frozen every socket call would wait its 1 s timeout (and redis-py used to retry it three times); the
breaker makes the first failing call the only one that waits, for every request in this process,
until the breaker's window passes and one call asks again.
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from django.test import Client

from core import resilient_cache

from .conftest import assemble, node_sources

pytestmark = pytest.mark.services
MIRA = 424242424242424242


@pytest.fixture
def frozen_redis(settings, throwaway_redis, monkeypatch):
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    settings.CACHES = {
        "default": {
            "BACKEND": "core.redis_cache.RedisCache",
            "LOCATION": throwaway_redis.url,
            "OPTIONS": {
                "socket_connect_timeout": 1,
                "socket_timeout": 1,
                "retry": Retry(NoBackoff(), 0),
                "serializer": "core.cache_codec.MsgpackSerializer",
            },
        }
    }
    settings.CACHE_BREAKER_SECONDS = 3
    resilient_cache.reset_breaker()
    yield throwaway_redis
    if throwaway_redis.process and throwaway_redis.process.poll() is None:
        os.kill(throwaway_redis.process.pid, signal.SIGCONT)


def _timed(call):
    started = time.perf_counter()
    response = call()
    return response, time.perf_counter() - started


def test_a_frozen_redis_costs_one_timeout_then_requests_answer_at_database_speed(
    frozen_redis, lamp_preset, api_token
):
    client = Client()
    assert assemble(client, 1001, api_token).status_code == 200  # the first request pays the imports
    warm, idle = _timed(lambda: assemble(client, 1001, api_token))
    assert warm.status_code == 200
    os.kill(frozen_redis.process.pid, signal.SIGSTOP)
    turn = {"channel": 601, "user": MIRA, "messages": [{"role": "user", "content": "hi"}]}

    def store():
        return client.post(
            "/api/v1/servers/1001/stm/turns",
            data=json.dumps(turn),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {api_token}",
        )

    first, first_seconds = _timed(lambda: assemble(client, 1001, api_token))
    later = [_timed(lambda: assemble(client, 1001, api_token)) for _ in range(5)]
    write, write_seconds = _timed(store)
    print(
        f"\nfrozen Redis: idle assemble {idle * 1000:.0f} ms; first assemble {first_seconds * 1000:.0f} ms; "
        f"next five {', '.join(f'{s * 1000:.0f}' for _, s in later)} ms; memory write {write_seconds * 1000:.0f} ms"
    )
    assert first.status_code == 200 and node_sources(first) == {"main", "lamp"}
    assert first_seconds < 2.5  # one 1 s timeout (and the database), not 4 s per call
    assert all(r.status_code == 200 for r, _ in later) and write.status_code == 200
    assert max(s for _, s in later) < 0.8 and write_seconds < 0.8  # the breaker: no waiting at all

    os.kill(frozen_redis.process.pid, signal.SIGCONT)
    time.sleep(3.2)  # the breaker's window passes: the next call asks Redis again
    again, again_seconds = _timed(lambda: assemble(client, 1001, api_token))
    assert again.status_code == 200 and again_seconds < 1.0
    assert not resilient_cache.breaker_open()
