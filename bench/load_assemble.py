"""The assemble API under a bounded loopback load, with the caches warm, on one or more web server instances.

    python bench/load_assemble.py [--requests 2000] [--concurrency 8] [--seconds 60]
        [--workers 2] [--instances 1 [2 ...]] [--new-connections] [--preset FILE]

Sets up a throwaway SQLite database in a temporary directory (server 777001, one corpus preset
active, one API token), then for each count in --instances starts that many web server instances (`config.serve`)
(each with --workers workers, each on its own free port on 127.0.0.1) against the same database and
cache, warms them, sends a bounded number of requests spread over the instances in turn (stopping
early at the time limit) and prints requests/s and the p50/p99 latencies; with several counts, the
throughput of each relative to the first, and the CPU each request cost the servers and the client
(a figure the machine's other load hardly changes). Only loopback addresses are used; every server is stopped
at the end. With REDIS_URL set, the servers share that Redis (choose your own DB number);
otherwise each worker has its local-memory cache. The client threads run on the same machine as
the servers and take CPU from them. Each client thread keeps its connection open between requests,
as a bot's HTTP session (or the proxy in front of us) does; --new-connections opens one per request.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root, for devtools
from bench.corpus_path import CORPUS
from devtools.web_process import PYTHON, ROOT, free_port, start_server, stop_server, wait_until_up

SERVER_ID = 777001
SETUP = """
from servers.models import Server
from core.actors import SYSTEM
from servers.services import api_token_create
server = Server.objects.get(pk={server_id})
_, token = api_token_create(server=server, name="load bench", by=SYSTEM)
print(token)
"""


def run(cmd: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        sys.exit(f"setup failed: {' '.join(cmd[:4])}: {done.stderr.strip()[-500:]}")
    return done.stdout


_kept = threading.local()  # a client thread's open connection to each port


def _kept_connections() -> dict[int, http.client.HTTPConnection]:
    if not hasattr(_kept, "by_port"):
        _kept.by_port = {}
    return _kept.by_port


def request(port: int, token: str, body: bytes, *, keep_alive: bool = True) -> tuple[int, float]:
    """POST one assemble request; the status and the milliseconds to its whole answer.

    With `keep_alive` the thread's connection to `port` is reused, as a bot's HTTP session does, and
    opened again when the server has closed it."""
    conn = _kept_connections().pop(port, None) if keep_alive else None
    reused = conn is not None
    if conn is None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    start = time.perf_counter()
    try:
        conn.request(
            "POST",
            f"/api/v1/servers/{SERVER_ID}/assemble",
            body=body,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        response = conn.getresponse()
        response.read()
    except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
        conn.close()
        if not reused:
            raise
        return request(port, token, body, keep_alive=keep_alive)  # the server had closed an idle connection
    elapsed = (time.perf_counter() - start) * 1000
    if keep_alive and not response.will_close:
        _kept_connections()[port] = conn
    else:
        conn.close()
    return response.status, elapsed


def measure(
    ports: list[int],
    token: str,
    body: bytes,
    *,
    requests: int,
    concurrency: int,
    seconds: float,
    keep_alive: bool,
):
    """Send `requests` (at most `seconds`) from `concurrency` threads, spread over `ports` in turn."""
    latencies: list[float] = []
    failures = 0
    lock = threading.Lock()
    remaining = [requests]
    turn = itertools.cycle(ports)
    stop_at = time.monotonic() + seconds

    def client() -> None:
        nonlocal failures
        while time.monotonic() < stop_at:
            with lock:
                if remaining[0] <= 0:
                    return
                remaining[0] -= 1
                port = next(turn)
            status, ms = request(port, token, body, keep_alive=keep_alive)
            with lock:
                latencies.append(ms)
                failures += status != 200

    start = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, failures, time.perf_counter() - start


def group_cpu_seconds(group: int) -> float:
    """CPU seconds (user + system) used so far by the live processes of process group `group`."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:  # pgrp
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


def run_instances(count: int, args: argparse.Namespace, env: dict[str, str], token: str, body: bytes) -> dict:
    """Start `count` web server instances, warm them, load them; the figures."""
    ports = [free_port() for _ in range(count)]
    servers = [start_server(port, workers=args.workers, env=env) for port in ports]
    try:
        for port in ports:
            wait_until_up(port, time.monotonic() + 30)
            for _ in range(20 * args.workers):  # warm every worker's caches
                status, _ = request(port, token, body)
                if status != 200:
                    sys.exit(f"warm-up request failed with HTTP {status}")
        cpu_before = sum(group_cpu_seconds(server.pid) for server in servers)
        client_before = time.process_time()
        latencies, failures, wall = measure(
            ports,
            token,
            body,
            requests=args.requests,
            concurrency=args.concurrency,
            seconds=args.seconds,
            keep_alive=not args.new_connections,
        )
        cpu = sum(group_cpu_seconds(server.pid) for server in servers) - cpu_before
        client_cpu = time.process_time() - client_before
    finally:
        for server in servers:
            stop_server(server)
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    connections = "a new connection per request" if args.new_connections else "connections kept open"
    print(
        f"instances: {count} x {args.workers} workers; client concurrency: {args.concurrency}, {connections}"
    )
    print(f"  requests: {len(latencies)} in {wall:.2f} s ({failures} failed)")
    print(f"  throughput: {len(latencies) / wall:.1f} requests/s")
    print(
        f"  latency p50: {statistics.median(latencies):.2f} ms   p99: {p99:.2f} ms   max: {latencies[-1]:.2f} ms"
    )
    if cpu > 0:
        print(
            f"  CPU per request: server {cpu * 1000 / len(latencies):.2f} ms"
            f" (= {len(latencies) / cpu:.0f} requests/s per fully busy core), client"
            f" {client_cpu * 1000 / len(latencies):.2f} ms (the machine's other load does not count)"
        )
    return {
        "instances": count,
        "workers_per_instance": args.workers,
        "requests_per_s": round(len(latencies) / wall, 1),
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(p99, 2),
        "failed": failures,
        "server_cpu_ms_per_request": round(cpu * 1000 / len(latencies), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--instances", type=int, nargs="+", default=[1])
    parser.add_argument(
        "--new-connections",
        action="store_true",
        help="open a new connection for every request (default: keep them open)",
    )
    parser.add_argument("--preset", default=str(CORPUS / "pm/marinara-spaghetti-recipe-essentials.json"))
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory(prefix="tk-load-")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp.name}/load.sqlite3", "DEBUG": "0"}
    env.pop("TEST_DATABASE_NAME", None)
    if env.get("REDIS_URL"):
        env["CACHE_KEY_PREFIX"] = f"tk-load-{os.getpid()}"
    try:
        run([PYTHON, "manage.py", "migrate", "-v0"], env)
        run([PYTHON, "manage.py", "preset", "import", args.preset, "--server", str(SERVER_ID), "--json"], env)
        token = (
            run([PYTHON, "manage.py", "shell", "-c", SETUP.format(server_id=SERVER_ID)], env)
            .strip()
            .splitlines()[-1]
        )
        body = (ROOT / "assembly" / "default_buckets.json").read_bytes()
        print(f"assemble API, preset {Path(args.preset).name}, default sample (7 messages), warm caches")
        print(
            f"cache: {'redis (shared)' if env.get('REDIS_URL') else 'local memory (per worker)'}; cores: {os.cpu_count()}"
        )
        results = [run_instances(count, args, env, token, body) for count in args.instances]
    finally:
        tmp.cleanup()
    base = results[0]["requests_per_s"]
    for result in results[1:]:
        print(
            f"{result['instances']} instances vs {results[0]['instances']}: {result['requests_per_s'] / base:.2f}x throughput"
        )
    for result in results:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
