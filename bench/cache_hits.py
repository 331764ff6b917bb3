"""Warm reads of the generational caches in one process (servers/generational_cache.py): the cost of
the layer itself, without Redis's round trip (embedded: SQLite and the local-memory cache).

    .venv/bin/python bench/cache_hits.py

Prints the median µs per warm read of the active preset, the sampling choice and the active card,
then what one shared-cache value costs to write and read back through Redis's serializer: the
stored active preset of a corpus-sized preset, with pickle (Django's default, before issue 35) and
with core/cache_codec.py (MessagePack, data only). The embedded cache itself keeps objects in
process and uses neither.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
os.environ.pop("DATABASE_URL", None)
os.environ.pop("REDIS_URL", None)
os.environ["TEST_DATABASE_NAME"] = str(Path(tempfile.gettempdir()) / "bench_cache_hits.sqlite3")

import django  # noqa: E402

django.setup()

from django.test.utils import setup_databases, teardown_databases  # noqa: E402

from characters import cache as card_cache  # noqa: E402
from core.actors import SYSTEM  # noqa: E402
from devtools.factories import make_preset  # noqa: E402
from presets import cache as preset_cache  # noqa: E402
from presets import services  # noqa: E402
from presets.sampling import cache as sampling_cache  # noqa: E402
from servers.services import server_ensure  # noqa: E402

READS, ROUNDS, SERVER_ID = 5000, 7, 4242


def main() -> None:
    old = setup_databases(verbosity=0, interactive=False)
    try:
        server = server_ensure(server_id=SERVER_ID, name="Bench", by=SYSTEM)
        services.preset_import(server=server, raw=make_preset(("a", "x", True)), filename="a.json", by=SYSTEM)
        for read in (
            preset_cache.get_active_preset,
            sampling_cache.get_sampling_choice,
            card_cache.get_active_card,
        ):
            read(SERVER_ID)
            rounds = []
            for _ in range(ROUNDS):
                started = time.perf_counter()
                for _ in range(READS):
                    read(SERVER_ID)
                rounds.append((time.perf_counter() - started) / READS * 1e6)
            print(f"{read.__module__}.{read.__name__}: {statistics.median(rounds):.1f} µs per warm read")
        serializer_costs()
    finally:
        teardown_databases(old, verbosity=0)


def serializer_costs() -> None:
    import pickle

    from core import cache_codec

    nodes = [(f"n{i}", f"Rule {i}: keep the story moving. " * 8, i % 3 != 0) for i in range(60)]
    server = server_ensure(server_id=SERVER_ID + 1, name="Bench big", by=SYSTEM)
    services.preset_import(server=server, raw=make_preset(*nodes), filename="big.json", by=SYSTEM)
    value = (1, preset_cache._load_active(SERVER_ID + 1))
    assert cache_codec.loads(cache_codec.dumps(value)) == value
    codecs: tuple[tuple[str, Callable[[Any], bytes | int], Callable[[Any], Any]], ...] = (
        ("pickle", pickle.dumps, pickle.loads),
        ("cache_codec", cache_codec.dumps, cache_codec.loads),
    )
    for name, dumps, loads in codecs:
        data = dumps(value)
        assert isinstance(data, bytes)  # a tuple is stored as bytes (only a bare int stays an int)
        rounds = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            for _ in range(READS // 10):
                loads(dumps(value))
            rounds.append((time.perf_counter() - started) / (READS // 10) * 1e6)
        print(
            f"{name}: {len(data)} bytes, {statistics.median(rounds):.1f} µs per write + read of a 60-node preset"
        )


if __name__ == "__main__":
    main()
