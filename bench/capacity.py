"""What one web process costs, for the capacity table in docs/scaling.md.

    python bench/capacity.py [--presets 1 8 32 64] [--requests 300]

Sets up a throwaway SQLite database (the counts of SQL queries do not depend on the engine) with one
server per corpus preset, then prints:
- SQL queries and cache round trips per assemble request: cold (right after a preset change) and
  warm, with inline STM and with stored STM (`stm_context`), and for a signed-in dashboard page;
- the resident memory of a fresh process that has compiled N active presets (one child process per
  N, so nothing measured is left over from the imports), and so the cost of one compiled preset;
- the CPU time one warm assemble request takes in this process (single thread, no HTTP; the load
  benchmarks' preset), i.e. the requests per second one fully busy core can serve; and the same
  when this process must compile the preset again from the shared cache's copy (a local miss).
The local-memory cache stands in for Redis; cache round trips are the calls a request makes to it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from core.actors import SYSTEM

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench.corpus_path import CORPUS  # noqa: E402

FIRST_SERVER = 880_000_001
BUCKETS = ROOT / "assembly" / "default_buckets.json"
CORPUS_FILES = sorted((CORPUS / "pm").glob("*.json"))


def rss_mib() -> float:
    """This process's resident set size (Linux), MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def setup_django(database: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{database}"
    os.environ.pop("REDIS_URL", None)
    os.environ.pop("TEST_DATABASE_NAME", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()


class CacheCalls:
    """Counts calls to the Django cache (each one a Redis round trip in production).

    Only outermost calls count: the local-memory backend's `get_many` calls `get` per key, where
    Redis answers one MGET."""

    METHODS = ("get", "set", "add", "delete", "get_many", "set_many", "delete_many", "incr")

    def __init__(self) -> None:
        from django.core.cache import caches

        self.count = 0
        self.depth = 0
        self.backend = caches["default"]  # this thread's backend behind django.core.cache.cache
        backend = type(self.backend)
        for name in self.METHODS:
            original = getattr(backend, name)

            def counted(obj, *args, _original=original, **kwargs):
                self.count += self.depth == 0
                self.depth += 1
                try:
                    return _original(obj, *args, **kwargs)
                finally:
                    self.depth -= 1

            setattr(backend, name, counted)


def populate(count: int) -> tuple[list[int], str]:
    """`count` servers, each with one corpus preset active; their ids and an API token for the first."""
    from django.core.management import call_command

    from engine.st_format import ImportRefused
    from presets import services
    from servers.services import api_token_create, server_ensure

    call_command("migrate", verbosity=0)
    first = CORPUS / "pm" / "marinara-spaghetti-recipe-essentials.json"  # the load benchmarks' preset
    files = [first, *sorted(p for p in (CORPUS / "pm").glob("*.json") if p != first)]
    servers: list[int] = []
    index = 0
    while len(servers) < count:
        path = files[index % len(files)]
        index += 1
        server = server_ensure(
            server_id=FIRST_SERVER + len(servers), name=f"Capacity {len(servers)}", by=SYSTEM
        )
        try:
            services.preset_import(server=server, raw=path.read_bytes(), filename=path.name, by=SYSTEM)
        except ImportRefused:
            continue
        servers.append(server.pk)
    from servers.models import Server

    _, token = api_token_create(server=Server.objects.get(pk=servers[0]), name="capacity", by=SYSTEM)
    return servers, token


def per_request(servers: list[int], token: str, requests: int) -> dict[str, float]:
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from memory.services import stm_put_entry
    from presets import cache as preset_cache
    from servers.models import Role, Server
    from servers.services import membership_set
    from servers.writes import server_write

    server_id = servers[0]
    client = Client()
    inline = BUCKETS.read_text()
    stored = json.dumps({**json.loads(inline), "stm_context": {"channel": 501, "user": 9, "has_tools": True}})
    stm_put_entry(
        server_id=server_id, channel_id=501, user_id=9, messages=[], summary="They planned the heist."
    )
    calls = CacheCalls()
    url = f"/api/v1/servers/{server_id}/assemble"
    headers: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Bearer {token}"}

    def measured(body: str) -> tuple[int, int]:
        before = calls.count
        with CaptureQueriesContext(connection) as queries:
            response = client.post(url, body, content_type="application/json", **headers)
        assert response.status_code == 200, response.content[:300]
        return len(queries), calls.count - before

    figures: dict[str, float] = {}
    with server_write(server_id=server_id, stamps=(preset_cache.STAMP,)):
        pass
    preset_cache.clear_local()
    figures["cold_queries"], figures["cold_cache_calls"] = measured(inline)
    figures["warm_queries"], figures["warm_cache_calls"] = measured(inline)
    measured(stored)
    figures["stored_stm_queries"], figures["stored_stm_cache_calls"] = measured(stored)

    user = get_user_model().objects.create_user(username="capacity", password="capacity bench")
    membership_set(server=Server.objects.get(pk=server_id), user=user, role=Role.ADMIN, by=SYSTEM)
    client.force_login(user)
    page = f"/servers/{server_id}/presets/"
    client.get(page)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(page).status_code == 200
    figures["page_queries"] = len(queries)

    for _ in range(20):
        client.post(url, inline, content_type="application/json", **headers)
    samples = []
    for _ in range(requests):
        started = time.process_time()
        client.post(url, inline, content_type="application/json", **headers)
        samples.append(time.process_time() - started)
    figures["cpu_ms_per_request"] = statistics.median(samples) * 1000
    samples = []
    for _ in range(max(10, requests // 10)):
        preset_cache.clear_local()  # this process lost its compiled copy; the shared cache still has it
        started = time.process_time()
        client.post(url, inline, content_type="application/json", **headers)
        samples.append(time.process_time() - started)
    figures["cpu_ms_local_miss"] = statistics.median(samples) * 1000

    compile_ms, shared_kib = [], []
    for other in servers[: len(CORPUS_FILES)]:  # each corpus preset once
        preset_cache.get_active_preset(other)  # the shared cache has it now
        shared_kib.append(len(pickle.dumps(cache.get(f"presets:v1:active:{other}"), -1)) / 1024)
        preset_cache.clear_local()
        started = time.process_time()
        preset_cache.get_active_preset(other)
        compile_ms.append((time.process_time() - started) * 1000)
    compile_ms.sort()
    figures["local_miss_ms_mean"] = statistics.fmean(compile_ms)
    figures["local_miss_ms_median"] = statistics.median(compile_ms)
    figures["local_miss_ms_p90"] = compile_ms[int(len(compile_ms) * 0.9)]
    figures["local_miss_ms_max"] = compile_ms[-1]
    figures["shared_copy_kib_mean"] = statistics.fmean(shared_kib)
    figures["shared_copy_kib_max"] = max(shared_kib)
    return figures


def memory_child(database: str, count: int) -> None:
    """In a fresh process: RSS before and after compiling `count` servers' active presets."""
    setup_django(database)
    from django.core.cache import cache
    from django.test import Client

    from presets import cache as preset_cache
    from servers.models import Server

    servers = list(Server.objects.filter(pk__gte=FIRST_SERVER).order_by("pk").values_list("pk", flat=True))
    token_body = BUCKETS.read_text()
    Client().post(f"/api/v1/servers/{servers[0]}/assemble", token_body, content_type="application/json")
    preset_cache.clear_local()
    gc.collect()
    before = rss_mib()
    for server_id in servers[:count]:
        preset_cache.get_active_preset(server_id)
    cache.clear()  # the local-memory cache stands in for Redis: its copies are not the process's cost
    gc.collect()
    print(json.dumps({"before_mib": before, "after_mib": rss_mib()}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--database", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.database, args.memory_child)
        return

    with tempfile.TemporaryDirectory(prefix="tk-capacity-") as tmp:
        database = f"{tmp}/capacity.sqlite3"
        setup_django(database)
        servers, token = populate(max(*args.presets, len(CORPUS_FILES)))
        figures = per_request(servers, token, args.requests)
        print("per assemble request (default sample document, 7 messages)")
        print(
            f"  cold (just after a preset change): {figures['cold_queries']:.0f} SQL queries, "
            f"{figures['cold_cache_calls']:.0f} cache round trips"
        )
        print(
            f"  warm, inline STM:                  {figures['warm_queries']:.0f} SQL queries, "
            f"{figures['warm_cache_calls']:.0f} cache round trips"
        )
        print(
            f"  warm, stored STM (stm_context):    {figures['stored_stm_queries']:.0f} SQL queries, "
            f"{figures['stored_stm_cache_calls']:.0f} cache round trips"
        )
        print(f"  signed-in preset list page:        {figures['page_queries']:.0f} SQL queries")
        print(
            f"  CPU per warm request (in-process, no HTTP): {figures['cpu_ms_per_request']:.2f} ms "
            f"= {1000 / figures['cpu_ms_per_request']:.0f} requests/s per busy core"
        )

        print(
            f"  CPU per request with a local miss (compiled again from the shared copy): "
            f"{figures['cpu_ms_local_miss']:.2f} ms"
        )
        print(
            f"  a local miss alone, per corpus preset (shared copy → compiled): mean "
            f"{figures['local_miss_ms_mean']:.1f} ms, median "
            f"{figures['local_miss_ms_median']:.1f} ms, p90 {figures['local_miss_ms_p90']:.1f} ms, "
            f"max {figures['local_miss_ms_max']:.1f} ms"
        )
        print(
            f"  the shared copy a local miss reads from Redis: mean {figures['shared_copy_kib_mean']:.0f} KiB, "
            f"max {figures['shared_copy_kib_max']:.0f} KiB (pickled)"
        )
        print("resident memory of a fresh process compiling N active presets (corpus presets in turn)")
        rows = []
        for count in args.presets:
            child = subprocess.run(
                [sys.executable, __file__, "--memory-child", str(count), "--database", database],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
            )
            result = json.loads(child.stdout.strip().splitlines()[-1])
            rows.append((count, result["before_mib"], result["after_mib"]))
            print(
                f"  N={count:<4} before {result['before_mib']:7.1f} MiB   after {result['after_mib']:7.1f} MiB"
                f"   (+{result['after_mib'] - result['before_mib']:.1f} MiB)"
            )
        (first, _, low), (last, _, high) = rows[0], rows[-1]
        if last > first:
            print(f"  one compiled preset: {(high - low) / (last - first):.2f} MiB on average")
        print(json.dumps({**figures, "memory": rows}))


if __name__ == "__main__":
    main()
