"""Short-term memory expiry at scale, on PostgreSQL.

Run: python bench/stm_expiry.py [--rows 1000000] [--batch 2000] [--celery 1 2]
Uses its own database (`bench_tk_stm` on the server named by DATABASE_URL, default the local
PostgreSQL), fills it with INSERT … SELECT generate_series, then runs the service the beat task
runs. Prints the generation time, the total expiry time, the number of batches and the longest
single batch transaction, and how long one contributor load takes on a server with many channels.

With --celery N …, the backlog is made again for each N and drained by N real Celery workers (solo
pool, on the Redis named by REDIS_URL as the broker) through the beat task fanning out to N tasks;
prints each wall time, the rows each worker deleted, and the speed-up over the first N. Every
worker shares the machine's cores with PostgreSQL.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BENCH_DB = "bench_tk_stm"
SERVER = 1001
LINEAGES = 100


def bench_url() -> str:
    base = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/tavernkeep"
    if not base.startswith("postgres"):
        sys.exit("bench/stm_expiry.py needs PostgreSQL: set DATABASE_URL=postgres://…")
    parts = urlsplit(base)
    import psycopg

    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [BENCH_DB]).fetchone():
            conn.execute(f'CREATE DATABASE "{BENCH_DB}"')
    return urlunsplit(parts._replace(path="/" + BENCH_DB))


def fill(rows: int) -> None:
    """A fresh backlog of `rows` entries, ages spread over 0–30 h."""
    from django.db import connection

    channels = rows // LINEAGES
    with connection.cursor() as cur:
        cur.execute("TRUNCATE memory_stmentry, servers_channel, memory_discorduser CASCADE")
        cur.execute(
            "INSERT INTO servers_server (id, name, stm_privacy_bypass, created_at) "
            "VALUES (%s, 'Bench', false, now()) ON CONFLICT (id) DO NOTHING",
            [SERVER],
        )
        cur.execute("INSERT INTO memory_discorduser (id) VALUES (7)")
        cur.execute(
            "INSERT INTO servers_channel (id, discord_id, owner_id, server_id, parent_id, name, is_private, listed) "
            "SELECT g, g, %s, %s, NULL, '', g %% 17 = 0, false FROM generate_series(1, %s) g",
            [SERVER, SERVER, channels],
        )
        # Ages spread over 0–30 h; every third entry has a summary (24 h TTL instead of 12 h).
        cur.execute(
            "INSERT INTO memory_stmentry (owner_id, server_id, channel_id, user_id, lineage, messages, summary, "
            "updated_at) SELECT %s, %s, 1 + (g %% %s), 7, 'l' || (g / %s), '[]'::jsonb, "
            "CASE WHEN g %% 3 = 0 THEN 'a summary' ELSE '' END, "
            "now() - make_interval(secs => (g::bigint * 7919 %% 108000)) "
            "FROM generate_series(0, %s - 1) g",
            [SERVER, SERVER, channels, channels, rows],
        )
        cur.execute("ANALYZE memory_stmentry")


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--rows", type=int, default=1_000_000)
    options.add_argument("--batch", type=int, default=2000)
    options.add_argument("--celery", type=int, nargs="*", default=[], metavar="N")
    args = options.parse_args()

    os.environ["DATABASE_URL"] = bench_url()
    if args.celery and not os.environ.get("REDIS_URL"):
        sys.exit("--celery needs REDIS_URL (the broker)")
    if not args.celery:
        os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    from engine.stm import StmContext
    from memory.models import StmEntry
    from memory.selectors import expired_q, stm_contribution
    from memory.services import expire_entries

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    fill(args.rows)
    generated = time.perf_counter() - started
    now = timezone.now()
    total = StmEntry.objects.count()
    expired = StmEntry.objects.filter(expired_q(now=now)).count()
    print(f"rows generated        {total:>12,}  in {generated:6.1f} s")
    print(f"expired at start      {expired:>12,}")

    context = StmContext(channel=1, user=7, lineage="l0", has_tools=True)
    started = time.perf_counter()
    result = stm_contribution(server_id=SERVER, context=context, now=now)
    load = time.perf_counter() - started
    print(f"contributor load      {len(result.verdicts):>12,} entries in one lineage: {load * 1000:8.1f} ms")

    started = time.perf_counter()
    report = expire_entries(now=now, batch_size=args.batch)
    elapsed = time.perf_counter() - started
    left = StmEntry.objects.count()
    print(
        f"expiry deleted        {report.deleted:>12,}  in {elapsed:6.1f} s ({report.deleted / elapsed:,.0f} rows/s)"
    )
    print(f"batches               {report.batches:>12,}  of up to {args.batch:,} rows")
    print(f"longest transaction   {report.longest_batch_seconds * 1000:>12.1f} ms")
    print(f"rows left (live)      {left:>12,}  (expected {total - expired:,})")
    started = time.perf_counter()
    again = expire_entries(now=now, batch_size=args.batch)
    print(
        f"second run            {again.deleted:>12,} deleted in {(time.perf_counter() - started) * 1000:.1f} ms"
    )
    if args.celery:
        drain_with_workers(args.celery, rows=args.rows, batch=args.batch)


def drain_with_workers(counts: list[int], *, rows: int, batch: int) -> None:
    """The same backlog, made again for each count, drained by that many real Celery workers."""
    import re
    import uuid

    from django.db import connection
    from django.utils import timezone

    from devtools.celery_worker import start_worker, stop_worker, wait_until_ready
    from memory.models import StmEntry
    from memory.selectors import expired_q
    from memory.tasks import expire_stm_entries

    walls: list[float] = []
    for count in counts:
        fill(rows)
        expired = StmEntry.objects.filter(expired_q(now=timezone.now())).count()
        queue = f"bench-stm-{uuid.uuid4().hex[:8]}"
        names = [f"{queue}-{i}@bench" for i in range(count)]
        workers = [start_worker(queue, capture_output=True, name=name, loglevel="info") for name in names]
        try:
            wait_until_ready(*names)
            started, cutoff = time.perf_counter(), timezone.now()  # the tasks' own `now` is later
            expire_stm_entries.apply_async(kwargs={"helpers": count - 1, "batch_size": batch}, queue=queue)
            while StmEntry.objects.filter(expired_q(now=cutoff)).exists():
                time.sleep(0.05)
            wall = time.perf_counter() - started
        finally:
            outputs = [stop_worker(worker) for worker in workers]
            connection.close()
        shares = [
            sum(int(n) for n in re.findall(r"expired (\d+) short-term memory entries", out))
            for out in outputs
        ]
        walls.append(wall)
        print(
            f"{count} Celery worker(s)      {expired:>12,}  in {wall:6.1f} s ({expired / wall:,.0f} rows/s); "
            f"per worker: {', '.join(f'{share:,}' for share in shares)}"
        )
    for count, wall in list(zip(counts, walls, strict=True))[1:]:
        print(f"{count} workers vs {counts[0]}: {walls[0] / wall:.2f}x faster")


if __name__ == "__main__":
    main()
