"""Assembling from a stored channel conversation, and posting one event (docs/channels.md#speed).

    .venv/bin/python bench/channel_conversation.py [--runs N]

Creates a throwaway database (TEST_DATABASE_NAME, default bench_tk_channels) and a server with a
small preset that reads and writes variables. A channel holds 200 stored messages (every third
reply writes a variable). Times, warm, through the assemble API in process (Django's test client,
bearer token): the same assembly with the 200 messages and the variables in the body, then with
`"conversation"`; the ratio (target ≤ 1.2×) and the queries the stored one makes, in wall-clock
time and in this process's CPU time (which other load on the machine hardly changes). Then posting a
new reply event (a write macro in it) and the same event again (a retry), and, for scale, a
transaction that writes one row (what any event stored durably pays for the commit). Medians in ms.
Run with DATABASE_URL (and REDIS_URL) for PostgreSQL figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("TEST_DATABASE_NAME", "bench_tk_channels")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_databases, teardown_databases  # noqa: E402
from django.utils import timezone  # noqa: E402

from conversations.channels import services as channel_services  # noqa: E402
from conversations.channels.selectors import stored_chat  # noqa: E402
from conversations.models import ChannelConversation  # noqa: E402
from core.actors import CLI, SYSTEM  # noqa: E402
from devtools.factories import make_preset  # noqa: E402
from presets import services as preset_services  # noqa: E402
from servers.services import api_token_create, server_ensure  # noqa: E402

SERVER_ID = 9_000_000_047
CHANNEL = 1_234_567_890_123_456_789
MESSAGES = 200
TARGET_RATIO = 1.2
TARGET_EVENT_MS = 10.0
STATUS = "{{setvar::weather::rain}}Weather {{getvar::weather}}; gold {{getvar::gold}}; turn {{getvar::turn}}."


def fill_channel() -> None:
    for index in range(MESSAGES):
        message_id = 1_000_000 + index
        if index % 2 == 0:
            channel_services.message_post(
                server_id=SERVER_ID,
                channel_id=CHANNEL,
                message_id=message_id,
                role="user",
                content=f"Mira asks about the road, the weather and the price of ale ({index}).",
                author_id=42,
                author_name="Mira",
            )
        else:
            writes = "{{addvar::gold::3}}{{incvar::turn}}" if index % 3 == 0 else ""
            channel_services.message_post(
                server_id=SERVER_ID,
                channel_id=CHANNEL,
                message_id=message_id,
                role="assistant",
                content=f"The keeper answers at length about the road and the rain ({index}). {writes}",
            )


CPU: dict[str, list[float]] = {}  # CPU ms of this process per request, by kind


def timed(call, runs: int, kind: str = "") -> list[float]:
    samples = []
    for _ in range(runs):
        started, cpu = time.perf_counter(), time.process_time()
        call()
        samples.append((time.perf_counter() - started) * 1000)
        CPU.setdefault(kind, []).append((time.process_time() - cpu) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    # One server sends every request here, back to back: past a server's CPU share (core/fairness.py).
    settings.SERVER_CPU_SHARE = 1000.0
    # The stamp listener's connection would keep the throwaway database from being dropped.
    settings.CACHE_STAMP_LISTENER = False
    old = setup_databases(verbosity=0, interactive=False)
    try:
        server = server_ensure(server_id=SERVER_ID, name="Bench", by=SYSTEM)
        preset_services.preset_import(
            server=server, raw=make_preset(("status", STATUS, True)), filename="status.json", by=CLI
        )
        _, token = api_token_create(server=server, name="bench", by=CLI)
        fill_channel()
        run(runs, token)
    finally:
        teardown_databases(old, verbosity=0)


def run(runs: int, token: str) -> None:
    client = Client()
    headers: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    url = f"/api/v1/servers/{SERVER_ID}/assemble"
    names = {"user": "Mira", "char": "Keeper"}
    stored = client.get(f"/api/v1/servers/{SERVER_ID}/channels/{CHANNEL}/conversation", **headers).json()
    history = [{"role": m["role"], "name": m["name"], "content": m["content"]} for m in stored["messages"]]
    # The same request a bot that keeps the history sends: the channel named too (its preset, group
    # and World Info state are looked up either way).
    inline = json.dumps(
        {
            "history": history,
            "variables": stored["variables"],
            "names": names,
            "seed": 1,
            "channel": str(CHANNEL),
        }
    )
    from_store = json.dumps({"conversation": str(CHANNEL), "names": names, "seed": 1})
    # The same again with each message's time, as the stored history carries it.
    timed_history = stored_chat(SERVER_ID, CHANNEL)
    assert timed_history is not None
    inline_times = json.dumps(
        {
            "history": timed_history.history,
            "variables": stored["variables"],
            "names": names,
            "seed": 1,
            "channel": str(CHANNEL),
        }
    )

    def post(body: str) -> None:
        response = client.post(url, body, content_type="application/json", **headers)
        assert response.status_code == 200, response.content

    for _ in range(5):  # warm: caches, templates, the first render's writes kept
        post(inline)
        post(from_store)
    # Interleaved, so both feel the same load on a shared machine.
    with_history, with_times, with_store = [], [], []
    for _ in range(runs):
        with_history += timed(lambda: post(inline), 1, "history")
        with_times += timed(lambda: post(inline_times), 1, "times")
        with_store += timed(lambda: post(from_store), 1, "store")
    with CaptureQueriesContext(connection) as captured:
        post(from_store)
    queries = [
        q["sql"].split(" FROM ")[1].split()[0] if " FROM " in q["sql"] else q["sql"][:30] for q in captured
    ]
    ratio = statistics.median(with_store) / statistics.median(with_history)
    ratio_times = statistics.median(with_store) / statistics.median(with_times)
    print(
        f"database: {connection.vendor}, cache: {settings.CACHES['default']['BACKEND'].rsplit('.', 1)[-1]}, median of {runs}"
    )
    print(f"assemble, {MESSAGES} messages in the body:      {statistics.median(with_history):7.2f} ms")
    print(f"assemble, the same with their times:        {statistics.median(with_times):7.2f} ms")
    print(f"assemble, conversation (stored, {MESSAGES}):      {statistics.median(with_store):7.2f} ms")
    print(
        f"ratio {ratio:.2f}x (target <= {TARGET_RATIO}x: {'ok' if ratio <= TARGET_RATIO else 'SLOW'}), "
        f"{ratio_times:.2f}x against the body with times; "
        f"{len(captured)} queries: {', '.join(queries)}"
    )
    cpu = {kind: statistics.median(CPU[kind]) for kind in ("history", "times", "store")}
    print(
        f"CPU of this process per request (what machine load hardly changes; the database server's "
        f"own work not counted): body {cpu['history']:.2f} ms, with times {cpu['times']:.2f} ms, "
        f"stored {cpu['store']:.2f} ms; ratio {cpu['store'] / cpu['history']:.2f}x "
        f"({cpu['store'] / cpu['times']:.2f}x against the body with times)"
    )

    events = f"/api/v1/servers/{SERVER_ID}/channels/{CHANNEL}/messages"
    counter = iter(range(2_000_000, 3_000_000))

    def post_event(message_id: int) -> None:
        body = {"id": str(message_id), "role": "assistant", "content": "The rain stops. {{incvar::turn}}"}
        response = client.post(events, json.dumps(body), content_type="application/json", **headers)
        assert response.status_code in (200, 201), response.content

    for _ in range(5):
        post_event(next(counter))
    new = timed(lambda: post_event(next(counter)), runs)
    again = timed(lambda: post_event(2_000_000), runs)
    with CaptureQueriesContext(connection) as captured:
        post_event(next(counter))
    verdict = "ok" if statistics.median(new) < TARGET_EVENT_MS else "SLOW"
    print(
        f"post a reply event: {statistics.median(new):6.2f} ms (target < {TARGET_EVENT_MS:.0f} ms: {verdict}), "
        f"{len(captured)} queries; the same id again: {statistics.median(again):6.2f} ms"
    )
    floor = timed(write_one_row, runs)
    print(
        f"  the floor of any stored event here: a transaction writing one row, committed: "
        f"{statistics.median(floor):6.2f} ms (the database's flush to disk at the commit)"
    )


def write_one_row() -> None:
    with transaction.atomic():
        ChannelConversation.objects.filter(server_id=SERVER_ID, channel_id=CHANNEL).update(
            updated_at=timezone.now()
        )


if __name__ == "__main__":
    main()
