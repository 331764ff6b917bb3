"""A mixed, bounded load against the web server on loopback: the bot's API and signed-in dashboard pages at once.

    .venv/bin/python bench/load_mixed.py [--requests 10000] [--concurrency 20] [--workers 4]
        [--seconds 300] [--preset FILE]

The mix (per request, drawn with a fixed seed): 40% assemble API, 20% preset list API, 20% preset
list page (signed in), 20% preview render (signed in, htmx, with the CSRF token). Sets up a
throwaway database (SQLite in a temporary directory; with DATABASE_URL pointing at PostgreSQL that
database is migrated and used — give it one of its own), one corpus preset active, an API token and
an admin; starts the web server on 127.0.0.1 (a free port), warms it, runs the load and prints
throughput, p50/p99 per kind and overall, and the error count (anything but 200), which must be 0.
Exit status 1 when any request failed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root, for devtools
from bench.corpus_path import CORPUS

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench.load_assemble import run
from devtools.web_process import PYTHON, ROOT, free_port, start_server, stop_server, wait_until_up

SERVER_ID = 777002
PASSWORD = "load bench password"
SETUP = """
from django.contrib.auth import get_user_model
from servers.models import Role, Server
from core.actors import SYSTEM
from servers.services import api_token_create, membership_set
server = Server.objects.get(pk={server_id})
user, _ = get_user_model().objects.get_or_create(username="loadadmin")
user.set_password({password!r}); user.save()
membership_set(server=server, user=user, role=Role.ADMIN, by=SYSTEM)
_, token = api_token_create(server=server, name="load mixed", by=SYSTEM)
print(token)
"""
MIX = [("assemble", 40), ("api_list", 20), ("page_list", 20), ("preview", 20)]


class Session:
    """The signed-in dashboard user's cookies and CSRF token, shared by every client thread."""

    def __init__(self, port: int) -> None:
        self.port = port
        status, headers, body = self.call("GET", "/login/")
        self.cookies = self._cookies(headers)
        csrf = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1).decode()  # type: ignore[union-attr]
        form = f"username=loadadmin&password={PASSWORD.replace(' ', '+')}&csrfmiddlewaretoken={csrf}"
        status, headers, _ = self.call(
            "POST", "/login/", form.encode(), {"Content-Type": "application/x-www-form-urlencoded"}
        )
        if status != 302:
            sys.exit(f"sign-in failed with HTTP {status}")
        self.cookies.update(self._cookies(headers))
        self.csrf = self.cookies["csrftoken"]

    def call(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        all_headers = dict(headers or {})
        if getattr(self, "cookies", None):
            all_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        conn.request(method, path, body=body, headers=all_headers)
        response = conn.getresponse()
        data = response.read()
        conn.close()
        return response.status, response.getheaders(), data

    @staticmethod
    def _cookies(headers: list[tuple[str, str]]) -> dict[str, str]:
        found = {}
        for name, value in headers:
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                found[key.strip()] = rest.split(";", 1)[0]
        return found


def make_requests(session: Session, token: str) -> dict[str, tuple[str, str, bytes, dict[str, str]]]:
    document = (ROOT / "assembly" / "default_buckets.json").read_bytes()
    bearer = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    form = "document=" + __import__("urllib.parse").parse.quote(document.decode())
    page = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-CSRFToken": session.csrf,
        "HX-Request": "true",
    }
    return {
        "assemble": ("POST", f"/api/v1/servers/{SERVER_ID}/assemble", document, bearer),
        "api_list": (
            "GET",
            f"/api/v1/servers/{SERVER_ID}/presets",
            b"",
            {"Authorization": f"Bearer {token}"},
        ),
        "page_list": ("GET", f"/servers/{SERVER_ID}/presets/", b"", {}),
        "preview": ("POST", f"/servers/{SERVER_ID}/preview/render/", form.encode(), page),
    }


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--preset", default=str(CORPUS / "pm/marinara-spaghetti-recipe-essentials.json"))
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory(prefix="tk-load-mixed-")
    env = {**os.environ, "DEBUG": "0", "SECURE_HTTPS": "0"}
    if not env.get("DATABASE_URL", "").startswith("postgres"):
        env["DATABASE_URL"] = f"sqlite:///{tmp.name}/load.sqlite3"
    env.pop("TEST_DATABASE_NAME", None)
    if env.get("REDIS_URL"):
        env["CACHE_KEY_PREFIX"] = f"tk-load-mixed-{os.getpid()}"
    run([PYTHON, "manage.py", "migrate", "-v0"], env)
    run(
        [
            PYTHON,
            "manage.py",
            "preset",
            "import",
            args.preset,
            "--server",
            str(SERVER_ID),
            "--replace",
            "--json",
        ],
        env,
    )
    token = (
        run([PYTHON, "manage.py", "shell", "-c", SETUP.format(server_id=SERVER_ID, password=PASSWORD)], env)
        .strip()
        .splitlines()[-1]
    )

    port = free_port()
    server = start_server(port, workers=args.workers, env=env)
    try:
        wait_until_up(port, time.monotonic() + 30)
        session = Session(port)
        requests = make_requests(session, token)
        for _ in range(10 * args.workers):  # warm every worker's caches
            for kind, (method, path, body, headers) in requests.items():
                status, _, _ = session.call(method, path, body or None, headers)
                if status != 200:
                    sys.exit(f"warm-up {kind} failed with HTTP {status}")

        rng = random.Random(7)
        kinds = [kind for kind, weight in MIX for _ in range(weight)]
        plan = [rng.choice(kinds) for _ in range(args.requests)]
        latencies: dict[str, list[float]] = {kind: [] for kind, _ in MIX}
        errors: dict[str, int] = dict.fromkeys(latencies, 0)
        lock = threading.Lock()
        stop_at = time.monotonic() + args.seconds

        def client() -> None:
            while time.monotonic() < stop_at:
                with lock:
                    if not plan:
                        return
                    kind = plan.pop()
                method, path, body, headers = requests[kind]
                start = time.perf_counter()
                try:
                    status, _, _ = session.call(method, path, body or None, headers)
                except OSError:
                    status = 0
                elapsed = (time.perf_counter() - start) * 1000
                with lock:
                    latencies[kind].append(elapsed)
                    errors[kind] += status != 200

        start = time.perf_counter()
        threads = [threading.Thread(target=client) for _ in range(args.concurrency)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - start
    finally:
        stop_server(server)
        tmp.cleanup()

    every = [ms for values in latencies.values() for ms in values]
    database = "postgresql" if env["DATABASE_URL"].startswith("postgres") else "sqlite"
    cache = "redis" if env.get("REDIS_URL") else "local memory"
    print(f"mixed load: preset {Path(args.preset).name}; database {database}; cache {cache}")
    print(f"web server workers: {args.workers}; client concurrency: {args.concurrency}")
    for kind, values in latencies.items():
        if values:
            print(
                f"  {kind:<10} {len(values):>6} requests  p50 {statistics.median(values):7.2f} ms"
                f"  p99 {percentile(values, 0.99):7.2f} ms  errors {errors[kind]}"
            )
    total_errors = sum(errors.values())
    print(f"requests: {len(every)} in {wall:.2f} s; errors: {total_errors}")
    print(f"throughput: {len(every) / wall:.1f} requests/s")
    print(f"latency p50: {statistics.median(every):.2f} ms   p99: {percentile(every, 0.99):.2f} ms")
    print(
        json.dumps(
            {
                "requests": len(every),
                "requests_per_s": round(len(every) / wall, 1),
                "p50_ms": round(statistics.median(every), 2),
                "p99_ms": round(percentile(every, 0.99), 2),
                "errors": total_errors,
            }
        )
    )
    sys.exit(1 if total_errors else 0)


if __name__ == "__main__":
    main()
