"""A bot's channel events through an outage (docs/channels.md#events, docs/reliability.md): PostgreSQL
unreachable for 10 s and Redis killed while a real web server (config.serve) takes the events.

The bot here does what a bot does: it sends each event until it is answered 2xx, again after an
error or a timeout, always with the same Discord id, and two replies of one channel go out at the
same moment. After the outage every event answered 2xx is stored exactly once, in Discord's order,
and the variables the replies wrote read in that order too.

The server reaches the test database through a CuttableProxy (cutting it is the outage: every
connection dropped, new ones refused) and caches in a redis-server of its own, which is killed. The
suite's own PostgreSQL and Redis are never touched.
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connection

from conversations.models import ChannelConversation, ChannelMessage
from devtools.celery_worker import worker_database_url
from devtools.web_process import free_port, start_server, stop_server, wait_until_up

from .conftest import CuttableProxy, ThrowawayRedis

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

CHANNEL = "1234567890123456789"
FIRST_ID = 1_300_000_000_000_000_000
OUTAGE_SECONDS = 10
ATTEMPT_TIMEOUT = 5.0
GIVE_UP_AFTER = 120.0


@dataclass
class Server:
    port: int
    token: str

    def post(self, body: dict) -> tuple[int, bytes]:
        """One attempt; (0, b"") when the connection failed or timed out, as a bot's client sees it."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=ATTEMPT_TIMEOUT)
        try:
            conn.request(
                "POST",
                f"/api/v1/servers/1001/channels/{CHANNEL}/messages",
                body=json.dumps(body),
                headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
            )
            response = conn.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException):
            return 0, b""
        finally:
            conn.close()


@dataclass
class Bot:
    """Sends each event until a 2xx answer, recording every attempt."""

    server: Server
    answered: dict[str, int] = field(default_factory=dict)  # event id -> the 2xx status
    failed_attempts: list[int] = field(default_factory=list)  # statuses (0: no answer) before a 2xx
    refused: list[tuple[str, int, bytes]] = field(default_factory=list)  # a 4xx other than 429
    lock: threading.Lock = field(default_factory=threading.Lock)

    def send(self, index: int) -> None:
        event_id = str(FIRST_ID + index)
        body = {
            "id": event_id,
            "role": "assistant",
            "author": {"id": "42", "name": "Tavernkeep"},
            "content": f"{{{{addvar::log::m{index}.}}}}Reply {index}.",
        }
        deadline = time.monotonic() + GIVE_UP_AFTER
        while time.monotonic() < deadline:
            status, content = self.server.post(body)
            with self.lock:
                if 200 <= status < 300:
                    self.answered[event_id] = status
                    return
                if 400 <= status < 500 and status != 429:
                    self.refused.append((event_id, status, content))
                    return
                self.failed_attempts.append(status)
            time.sleep(0.2)

    def send_at_once(self, first: int, second: int) -> None:
        """Two replies of one channel at the same moment (two group members answering)."""
        threads = [threading.Thread(target=self.send, args=(i,)) for i in (second, first)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


@pytest.fixture
def outage_server(api_token: str) -> Iterator[tuple[Server, CuttableProxy, ThrowawayRedis]]:
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: the outage is made on a proxy in front of it")
    database = connection.settings_dict
    proxy = CuttableProxy(database["HOST"] or "127.0.0.1", int(database["PORT"] or 5432))
    redis = ThrowawayRedis()
    redis.start()
    url = urlsplit(worker_database_url())
    user = url.netloc.rpartition("@")[0]
    through_proxy = urlunsplit(url._replace(netloc=f"{user}@127.0.0.1:{proxy.port}" if user else ""))
    env = {
        **os.environ,
        "DATABASE_URL": through_proxy,
        "REDIS_URL": redis.url,
        "DEBUG": "0",
        "SECURE_HTTPS": "0",
        "OFFLOAD_WORKERS": "0",
        "SERVER_CPU_SHARE": "100",
        "SERVER_CPU_BURST_SECONDS": "100",
    }
    env.pop("TEST_DATABASE_NAME", None)
    port = free_port()
    web = start_server(port, workers=2, env=env)
    try:
        wait_until_up(port, time.monotonic() + 60)
        yield Server(port, api_token), proxy, redis
    finally:
        stop_server(web)
        proxy.close()
        redis.stop()


def test_every_event_answered_2xx_is_stored_once_in_discords_order_through_a_database_and_redis_outage(
    outage_server,
):
    server, proxy, redis = outage_server
    bot = Bot(server)
    outage_over = threading.Event()

    def outage() -> None:
        time.sleep(1.0)
        proxy.cut()  # PostgreSQL gone: connections dropped mid-request, new ones refused
        redis.stop()  # and Redis killed
        time.sleep(OUTAGE_SECONDS)
        proxy.open = True  # PostgreSQL back; Redis stays dead a while
        time.sleep(3.0)
        redis.start()  # an empty Redis comes back on the same port
        outage_over.set()

    fault = threading.Thread(target=outage)
    fault.start()
    index = 0
    while not outage_over.is_set() or index < 80:
        bot.send_at_once(index, index + 1)
        index += 2
        time.sleep(0.1)
    fault.join()

    sent = [str(FIRST_ID + i) for i in range(index)]
    assert not bot.refused, bot.refused[:3]
    assert sorted(bot.answered) == sent  # the bot's retries got every event through
    assert bot.failed_attempts, "the outage was never felt: the test proved nothing"
    stored = list(
        ChannelMessage.objects.filter(conversation__channel_id=int(CHANNEL))
        .order_by("discord_id")
        .values_list("discord_id", "content")
    )
    assert [str(discord_id) for discord_id, _ in stored] == sent  # none lost, none twice
    assert [content for _, content in stored] == [f"Reply {i}." for i in range(index)]
    variables = ChannelConversation.objects.get(server_id=1001, channel_id=int(CHANNEL)).variables
    assert variables == {"log": "".join(f"m{i}." for i in range(index))}  # applied once each, in order
