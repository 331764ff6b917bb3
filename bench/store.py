"""Parse + store timings for the preset library, the 500-node list render, and the active-preset cache.

Run against PostgreSQL (and Redis) for the numbers that matter:
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tavernkeep REDIS_URL=redis://127.0.0.1:6379/7 \
        .venv/bin/python bench/store.py
It creates a throwaway database of its own (TEST_DATABASE_NAME, default bench_tk_store) and drops it
afterwards. Targets: parse + store ≤ 100 ms for the largest corpus presets, ≤ 500 ms for the generated
2 MB / 500-node preset. Prints medians over several runs.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("TEST_DATABASE_NAME", "bench_tk_store")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_databases, teardown_databases  # noqa: E402
from django.urls import reverse  # noqa: E402

from bench.corpus_path import CORPUS  # noqa: E402
from core.actors import SYSTEM  # noqa: E402
from devtools.genpreset import make_big_preset  # noqa: E402
from engine.st_format import parse_preset  # noqa: E402
from presets import cache as preset_cache  # noqa: E402
from presets import services  # noqa: E402
from presets.models import Preset  # noqa: E402
from servers.services import server_ensure  # noqa: E402
from servers.writes import server_write  # noqa: E402

CORPUS = CORPUS / "pm"
RUNS = 7
LARGEST = 4
TARGET_CORPUS_MS = 100
TARGET_BIG_MS = 500
SERVER_ID = 9_000_000_001


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def time_import(server, raw: bytes, filename: str) -> tuple[float, float, int]:
    """Median parse-alone and parse+store times (ms) and the node count."""
    parse_times, store_times, nodes = [], [], 0
    for _ in range(RUNS):
        started = time.perf_counter()
        parse_preset(raw, filename=filename, max_bytes=settings.PRESET_MAX_BYTES)
        parse_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = services.preset_import(server=server, raw=raw, filename=filename, activate=True, by=SYSTEM)
        store_times.append(time.perf_counter() - started)
        nodes = result.preset.node_count
        Preset.objects.filter(pk=result.preset.pk).delete()
    return median_ms(parse_times), median_ms(store_times), nodes


def time_node_list(server, raw: bytes) -> tuple[float, int, int]:
    """Median render time (ms) of the node list page, its query count, and the page size in bytes."""
    preset = services.preset_import(server=server, raw=raw, filename="Big.json", by=SYSTEM).preset
    user = get_user_model().objects.create_superuser("bench", "bench@example.invalid", "bench-password")
    client = Client()
    client.force_login(user)
    url = reverse("presets:detail", args=[server.id, preset.pk])
    client.get(url)  # warm-up: template loading
    times, queries, size = [], 0, 0
    for _ in range(RUNS):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - started)
        queries, size = len(captured), len(response.content)
        assert response.status_code == 200
    return median_ms(times), queries, size


def time_cache(server_id: int) -> tuple[float, float, float]:
    """Median times (ms) of the active-preset cache: a miss (load + compile + store), a hit, and a
    hit in a process that has not compiled the preset yet (shared cache + compile)."""
    misses, hits = [], []
    for _ in range(RUNS):
        with server_write(server_id=server_id, stamps=(preset_cache.STAMP,)):
            pass
        started = time.perf_counter()
        preset_cache.get_active_preset(server_id)
        misses.append(time.perf_counter() - started)
    for _ in range(RUNS * 20):
        started = time.perf_counter()
        preset_cache.get_active_preset(server_id)
        hits.append(time.perf_counter() - started)
    preset_cache.clear_local()  # another process: the plain data from the shared cache, compiled
    other = []
    for _ in range(RUNS):
        started = time.perf_counter()
        preset_cache.get_active_preset(server_id)
        other.append(time.perf_counter() - started)
        preset_cache.clear_local()
    return median_ms(misses), median_ms(hits), median_ms(other)


def main() -> None:
    engine = connection.vendor
    cache_backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]
    old = setup_databases(verbosity=0, interactive=False)
    try:
        server = server_ensure(server_id=SERVER_ID, name="Bench", by=SYSTEM)
        print(f"database: {engine}, cache: {cache_backend}, median of {RUNS} runs")
        print(f"{'file':44} {'KiB':>6} {'nodes':>5} {'parse ms':>9} {'parse+store ms':>15} {'target':>7}")
        largest = sorted(CORPUS.glob("*.json"), key=lambda p: p.stat().st_size, reverse=True)[:LARGEST]
        for path in largest:
            raw = path.read_bytes()
            parse_ms, total_ms, nodes = time_import(server, raw, path.name)
            verdict = "ok" if total_ms <= TARGET_CORPUS_MS else "SLOW"
            print(
                f"{path.name:44} {len(raw) / 1024:6.0f} {nodes:5} {parse_ms:9.1f} {total_ms:15.1f} {verdict:>7}"
            )
        big = make_big_preset()
        parse_ms, total_ms, nodes = time_import(server, big, "generated.json")
        verdict = "ok" if total_ms <= TARGET_BIG_MS else "SLOW"
        print(
            f"{'generated (make_big_preset)':44} {len(big) / 1024:6.0f} {nodes:5} {parse_ms:9.1f} {total_ms:15.1f} {verdict:>7}"
        )
        render_ms, queries, size = time_node_list(server, big)
        print(
            f"node list page, {nodes} nodes: {render_ms:.1f} ms, {queries} queries, {size / 1024:.0f} KiB of HTML"
        )
        for label, raw in (
            ("nemoengine-8.2.json", (CORPUS / "nemoengine-8.2.json").read_bytes()),
            ("generated", big),
        ):
            services.preset_import(
                server=server, raw=raw, filename=f"cache-{label}", activate=True, by=SYSTEM
            )
            miss_ms, hit_ms, other_ms = time_cache(SERVER_ID)
            print(
                f"active-preset cache, {label}: miss (load+compile+store) {miss_ms:.1f} ms, "
                f"hit {hit_ms:.2f} ms, first hit in another process {other_ms:.1f} ms"
            )
    finally:
        teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()
