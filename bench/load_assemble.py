"""The assemble API under a bounded loopback load, with the caches warm.

    .venv/bin/python bench/load_assemble.py [--requests 2000] [--concurrency 8] [--seconds 60]
        [--workers 2] [--preset FILE]

Sets up a throwaway SQLite database in a temporary directory (server 777001, one corpus preset
active, one API token), starts gunicorn on 127.0.0.1 (a free port) with it, warms the caches, then
sends a bounded number of requests (stopping early at the time limit) and prints requests/s and
the p50/p99 latencies, and the CPU each request cost the server and the client (a figure the
machine's other load hardly changes). Only loopback addresses are used; the server is stopped at the end. With
REDIS_URL set, the server's cache is that Redis (choose your own DB number); otherwise each worker
has its local-memory cache.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from corpus_path import CORPUS

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
GUNICORN = str(ROOT / ".venv" / "bin" / "gunicorn")
SERVER_ID = 777001
SETUP = """
from servers.models import Server
from servers.services import api_token_create
server = Server.objects.get(pk={server_id})
_, token = api_token_create(server=server, name="load bench", by=None)
print(token)
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        sys.exit(f"setup failed: {' '.join(cmd[:4])}: {done.stderr.strip()[-500:]}")
    return done.stdout


def wait_until_up(port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    sys.exit("gunicorn did not start in time")


def request(port: int, token: str, body: bytes) -> tuple[int, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    start = time.perf_counter()
    conn.request(
        "POST",
        f"/api/v1/servers/{SERVER_ID}/assemble",
        body=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    response = conn.getresponse()
    response.read()
    elapsed = (time.perf_counter() - start) * 1000
    conn.close()
    return response.status, elapsed


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


def start_gunicorn(port: int, *, workers: int, env: dict[str, str]) -> subprocess.Popen:
    """gunicorn serving the project on 127.0.0.1:`port`, in its own process group (so it can be stopped whole)."""
    return subprocess.Popen(
        [GUNICORN, "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", str(workers), "--log-level", "warning"],
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--preset", default=str(CORPUS / "pm/marinara-spaghetti-recipe-essentials.json"))
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory(prefix="tk-load-")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp.name}/load.sqlite3", "DEBUG": "0"}
    env.pop("TEST_DATABASE_NAME", None)
    if env.get("REDIS_URL"):
        env["CACHE_KEY_PREFIX"] = f"tk-load-{os.getpid()}"
    run([PYTHON, "manage.py", "migrate", "-v0"], env)
    run([PYTHON, "manage.py", "preset", "import", args.preset, "--server", str(SERVER_ID), "--json"], env)
    token = (
        run([PYTHON, "manage.py", "shell", "-c", SETUP.format(server_id=SERVER_ID)], env)
        .strip()
        .splitlines()[-1]
    )
    body = (ROOT / "assembly" / "default_buckets.json").read_bytes()

    port = free_port()
    server = start_gunicorn(port, workers=args.workers, env=env)
    try:
        wait_until_up(port, time.monotonic() + 30)
        for _ in range(20 * args.workers):  # warm every worker's caches
            status, _ = request(port, token, body)
            if status != 200:
                sys.exit(f"warm-up request failed with HTTP {status}")

        latencies: list[float] = []
        failures = 0
        lock = threading.Lock()
        remaining = [args.requests]
        stop_at = time.monotonic() + args.seconds

        def client() -> None:
            nonlocal failures
            while time.monotonic() < stop_at:
                with lock:
                    if remaining[0] <= 0:
                        return
                    remaining[0] -= 1
                status, ms = request(port, token, body)
                with lock:
                    latencies.append(ms)
                    failures += status != 200

        start = time.perf_counter()
        server_cpu, client_cpu = group_cpu_seconds(server.pid), time.process_time()
        threads = [threading.Thread(target=client) for _ in range(args.concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start
        server_cpu = group_cpu_seconds(server.pid) - server_cpu
        client_cpu = time.process_time() - client_cpu
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        tmp.cleanup()

    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(f"assemble API, preset {Path(args.preset).name}, default sample (7 messages), warm caches")
    print(
        f"gunicorn workers: {args.workers}; client concurrency: {args.concurrency}; cache: {'redis' if env.get('REDIS_URL') else 'local memory'}"
    )
    print(f"requests: {len(latencies)} in {wall:.2f} s ({failures} failed)")
    print(f"throughput: {len(latencies) / wall:.1f} requests/s")
    print(
        f"latency p50: {statistics.median(latencies):.2f} ms   p99: {p99:.2f} ms   max: {latencies[-1]:.2f} ms"
    )
    print(
        f"CPU per request: server {server_cpu * 1000 / len(latencies):.2f} ms, "
        f"client {client_cpu * 1000 / len(latencies):.2f} ms (the machine's other load does not count)"
    )
    print(
        json.dumps(
            {
                "requests_per_s": round(len(latencies) / wall, 1),
                "p50_ms": round(statistics.median(latencies), 2),
                "p99_ms": round(p99, 2),
                "server_cpu_ms_per_request": round(server_cpu * 1000 / len(latencies), 2),
            }
        )
    )


if __name__ == "__main__":
    main()
