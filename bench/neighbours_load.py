"""Two servers, one machine (issues 35 and 50): server B's moderator hammers the dashboard while server
A's bot calls assemble and A's moderator uses the dashboard. A's latencies (the bot's and the pages')
must stay within 3× their idle latency at the 99th percentile.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<a database of its own> REDIS_URL=redis://127.0.0.1:6379/<n> \\
      .venv/bin/python bench/neighbours_load.py [--seconds 30] [--hammers 6] [--threads 4] [--pages-workers 1] [--nodes 5000]
      [--polite] [--layout split|shared] [--pages-nice 10] [--sessions 5] [--pages-idle 60] [--port N]

Sets up A (the corpus-free default preset, an API token) and B (a generated preset of `--nodes` nodes,
active, and a signed-in moderator) and starts `config.serve` on 127.0.0.1 only. `--layout split` (the
default) is the layout docker-compose.yml and deploy/Caddyfile ship (docs/scaling.md#two-pools): the
bot's API on a pool of its own (one worker, one thread, as the API is served), the dashboard on
another (one worker, `--threads`) started with `--nice --pages-nice`; A's bot calls the first, B's
browser the second, as the proxy routes them. `--layout shared` serves both from the one dashboard
process, as `make run` does. Measures A's assemble alone (idle), then again while `--hammers` threads
(in a process of their own, so that A's timings do not include the bench's own interpreter lock) send
B's preview renders, B's big preset page and B's regex tester without pause, spread over `--sessions`
sign-ins of B's moderator (an account keeps at most 5). A's moderator, signed in on the dashboard,
opens A's presets page and renders A's preview one after another, a fifth of a second apart (a
person clicking), idle and then under B's load (A's bot over the first half of it, A's pages over
the second). Prints p50/p99/max for A's bot and
A's pages (idle and under load), every answer of A's that was not a 200 (its status and the start of
its body), what B got (200 / 429 / stopped at the wall limit / other), each of A's pages under load
on its own, and where A's and B's offloaded calls spent their time under load (the dashboard's
`tavernkeep.offload` log: waiting for the server's turn, for a new child's start, the work; "inline"
is small work done in the web thread, docs/reliability.md), and exits 1 when A's p99
under load is over 3× idle for the bot or the pages, or any A request failed.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import multiprocessing
import multiprocessing.queues
import os
import re
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root, for devtools
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench.load_assemble import run
from devtools.web_process import PYTHON, ROOT, free_port, start_server, stop_server, wait_until_up

A, B = 881001, 882002
PASSWORD = "neighbours bench password"
HOST = "127.0.0.1"  # never anything else
STOPPED = re.compile(rb"and was stopped|took too long to count")
SETUP = """
from django.contrib.auth import get_user_model
from servers.models import Role, Server
from core.actors import SYSTEM
from servers.services import api_token_create, membership_set, server_ensure
a = server_ensure(server_id={a}, name="Bench A", by=SYSTEM)
b = server_ensure(server_id={b}, name="Bench B", by=SYSTEM)
user, _ = get_user_model().objects.get_or_create(username="neighbour")
user.set_password({password!r}); user.save()
membership_set(server=b, user=user, role=Role.MODERATOR, by=SYSTEM)
user_a, _ = get_user_model().objects.get_or_create(username="neighbour-a")
user_a.set_password({password!r}); user_a.save()
membership_set(server=a, user=user_a, role=Role.MODERATOR, by=SYSTEM)
_, token = api_token_create(server=a, name="A bot", by=SYSTEM)
print(token)
"""


def big_preset(nodes: int) -> bytes:
    """A Prompt Manager preset of `nodes` short prompts, compact (well under the 2 MiB upload limit)."""
    prompts = [{"identifier": "main", "name": "Main", "content": "Main prompt."}]
    prompts += [
        {"identifier": f"n{i}", "name": f"Node {i}", "content": f"Rule {i}: keep the story moving."}
        for i in range(nodes - 1)
    ]
    order = [{"identifier": p["identifier"], "enabled": True} for p in prompts]
    return json.dumps(
        {"prompts": prompts, "prompt_order": [{"character_id": 100001, "order": order}]}
    ).encode()


def call(
    port: int, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, list[tuple[str, str]], bytes]:
    conn = http.client.HTTPConnection(HOST, port, timeout=60)
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, response.getheaders(), data


def cookies(headers: list[tuple[str, str]]) -> dict[str, str]:
    found = {}
    for name, value in headers:
        if name.lower() == "set-cookie":
            key, _, rest = value.partition("=")
            found[key.strip()] = rest.split(";", 1)[0]
    return found


def sign_in(port: int, username: str = "neighbour") -> tuple[dict[str, str], str]:
    status, headers, body = call(port, "GET", "/login/")
    jar = cookies(headers)
    csrf = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1).decode()  # type: ignore[union-attr]
    form = urllib.parse.urlencode({"username": username, "password": PASSWORD, "csrfmiddlewaretoken": csrf})
    status, headers, _ = call(
        port,
        "POST",
        "/login/",
        form.encode(),
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"csrftoken={jar['csrftoken']}"},
    )
    if status != 302:
        sys.exit(f"sign-in failed with HTTP {status}")
    jar.update(cookies(headers))
    return jar, jar["csrftoken"]


OFFLOAD_LINE = re.compile(r"offload server=(\S+) work=(\S+) outcome=(\S+) (.*)")


def print_offload_log(text: str) -> None:
    """Where A's and B's offloaded calls spent their time under load: per server, work and outcome,
    the count, and the median and most of each step (turn, start, work, after) in ms."""
    calls: collections.defaultdict[tuple[str, str, str], list[dict[str, float]]] = collections.defaultdict(
        list
    )
    for match in OFFLOAD_LINE.finditer(text):
        server, work, outcome, rest = match.groups()
        steps = {k.removesuffix("_ms"): float(v) for k, v in (f.split("=") for f in rest.split())}
        label = {str(A): "A", str(B): "B"}.get(server, server)
        calls[label, work, outcome].append(steps)
    for (server, work, outcome), rows in sorted(calls.items()):
        parts = []
        for step in ("turn", "start", "work", "after", "cpu", "fresh_child"):
            values = [row[step] for row in rows if step in row]
            if values and step == "fresh_child":
                parts.append(f"fresh child {int(sum(values))}")
            elif values:
                parts.append(f"{step} p50={percentile(values, 0.5):.0f} max={max(values):.0f}")
        print(f"  {server}'s {work} {outcome}: n={len(rows)} ms: " + ", ".join(parts))


def hammer_b(
    port: int,
    hammer_calls: list[list[tuple[str, str, str, bytes | None, dict[str, str]]]],
    seconds: float,
    threads: int,
    results: multiprocessing.queues.Queue,
    polite: bool = False,
    nice: int = 0,
) -> None:
    """`threads` threads sending B's calls in turn without pause for `seconds` (when `polite`, a
    thread answered 429 waits its Retry-After first, as a person clicking again would); puts what B got."""
    os.nice(nice)
    outcomes: dict[str, dict[str, int]] = {name: {} for name, *_ in hammer_calls[0]}
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def hammer(index: int) -> None:
        i = index
        while time.monotonic() < stop_at:
            session = hammer_calls[index % len(hammer_calls)]  # each thread keeps to one sign-in
            name, method, path, body, headers = session[i % len(session)]
            i += 1
            try:
                status, answer_headers, answer = call(port, method, path, body, headers)
            except OSError:
                status, answer_headers, answer = 0, [], b""
            key = str(status) if status in (200, 429) else "other"
            if STOPPED.search(answer):  # the work passed its wall limit (core/offload.py)
                key = "stopped"
            with lock:
                outcomes[name][key] = outcomes[name].get(key, 0) + 1
            if polite and status == 429:
                wait = dict((k.lower(), v) for k, v in answer_headers).get("retry-after", "1")
                time.sleep(min(float(wait), max(0.0, stop_at - time.monotonic())))

    workers = [threading.Thread(target=hammer, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    results.put(outcomes)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--hammers", type=int, default=6)
    parser.add_argument("--threads", type=int, default=4, help="threads per dashboard worker")
    parser.add_argument(
        "--pages-workers",
        type=int,
        default=1,
        help="the dashboard pool's worker processes (compose runs WEB_CONCURRENCY, 2 by default)",
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--idle", type=int, default=200, help="A's assemblies measured alone")
    parser.add_argument(
        "--polite", action="store_true", help="B's hammers wait the Retry-After of a 429 before the next call"
    )
    parser.add_argument(
        "--layout",
        choices=["split", "shared"],
        default="split",
        help="split (as deployed, docs/scaling.md): the bot's API on a pool of its own, the dashboard on a "
        "niced pool; shared: one web process serves both",
    )
    parser.add_argument(
        "--client-nice",
        type=int,
        default=0,
        help="the niceness of B's hammering client (it stands for a machine elsewhere)",
    )
    parser.add_argument("--pages-nice", type=int, default=10, help="the dashboard pool's niceness (split)")
    parser.add_argument("--sessions", type=int, default=5, help="B's sign-ins its hammers spread over")
    parser.add_argument("--pages-idle", type=int, default=60, help="A's pages measured alone")
    parser.add_argument("--port", type=int, default=0, help="the dashboard's port (the API's is the next)")
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory(prefix="tk-neighbours-")
    env = {**os.environ, "DEBUG": "0", "SECURE_HTTPS": "0"}
    if not env.get("DATABASE_URL", "").startswith("postgres"):
        env["DATABASE_URL"] = f"sqlite:///{tmp.name}/neighbours.sqlite3"
    env.pop("TEST_DATABASE_NAME", None)
    if env.get("REDIS_URL"):
        env["CACHE_KEY_PREFIX"] = f"tk-neighbours-{os.getpid()}"
    run([PYTHON, "manage.py", "migrate", "-v0"], env)
    token = (
        run([PYTHON, "manage.py", "shell", "-c", SETUP.format(a=A, b=B, password=PASSWORD)], env)
        .strip()
        .splitlines()[-1]
    )
    big = Path(tmp.name) / "big.json"
    big.write_bytes(big_preset(args.nodes))
    out = run(
        [PYTHON, "manage.py", "preset", "import", str(big), "--server", str(B), "--replace", "--json"], env
    )
    preset_id = int(re.search(r'"preset_id": (\d+)', out).group(1))  # type: ignore[union-attr]

    port = args.port or free_port()  # the dashboard's (B's hammers)
    offload_log = (Path(tmp.name) / "offload.log").open("w+")
    servers = [
        start_server(
            port,
            workers=args.pages_workers,
            threads=args.threads,
            env={**env, "OFFLOAD_LOG_LEVEL": "INFO"},
            nice=args.pages_nice if args.layout == "split" else 0,
            stderr=offload_log,
        )
    ]
    api_port = port
    if args.layout == "split":
        api_port = port + 1 if args.port else free_port()
        servers.append(start_server(api_port, workers=1, threads=1, env=env))
    try:
        for listening in {port, api_port}:
            wait_until_up(listening, time.monotonic() + 60)
        document = (ROOT / "assembly" / "default_buckets.json").read_bytes()
        bearer = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        preview = urllib.parse.urlencode({"document": document.decode()}).encode()
        tester = urllib.parse.urlencode({"text": "a" * 40 + "!" + " lorem" * 2000, "kind": "reply"}).encode()

        def browser(username: str) -> tuple[dict[str, str], dict[str, str]]:
            """A signed-in browser's headers: for a page, and for an htmx form post."""
            jar, csrf = sign_in(port, username)
            cookie = "; ".join(f"{k}={v}" for k, v in jar.items())
            form = {
                "Cookie": cookie,
                "Content-Type": "application/x-www-form-urlencoded",
                "X-CSRFToken": csrf,
                "HX-Request": "true",
            }
            return {"Cookie": cookie}, form

        hammer_calls = []
        for _ in range(max(1, args.sessions)):
            page, form = browser("neighbour")
            hammer_calls.append(
                [
                    ("preview", "POST", f"/servers/{B}/preview/render/", preview, form),
                    ("preset page", "GET", f"/servers/{B}/presets/{preset_id}/", None, page),
                    ("regex tester", "POST", f"/servers/{B}/regex/tester/", tester, form),
                ]
            )
        a_page, a_form = browser("neighbour-a")
        a_pages = [
            ("presets page", "GET", f"/servers/{A}/presets/", None, a_page),
            ("preview", "POST", f"/servers/{A}/preview/render/", preview, a_form),
        ]
        for _ in range(5):  # warm A
            status, _, body = call(api_port, "POST", f"/api/v1/servers/{A}/assemble", document, bearer)
            if status != 200:
                sys.exit(f"warm-up assemble failed with HTTP {status}: {body[:200]!r}")

        refused: collections.Counter[str] = collections.Counter()  # A's answers other than 200

        def measure_a(count: int | None, stop_at: float) -> tuple[list[float], int]:
            times: list[float] = []
            failures = 0
            while (count is None or len(times) < count) and time.monotonic() < stop_at:
                start = time.perf_counter()
                status, _, body = call(api_port, "POST", f"/api/v1/servers/{A}/assemble", document, bearer)
                times.append((time.perf_counter() - start) * 1000)
                if status != 200:
                    failures += 1
                    refused[f"{status} {body[:90].decode(errors='replace')}"] += 1
            return times, failures

        by_page: collections.defaultdict[str, list[float]] = collections.defaultdict(list)

        def measure_pages(count: int | None, stop_at: float) -> tuple[list[float], int]:
            """A's moderator: A's pages one after another, a fifth of a second apart."""
            by_page.clear()
            times: list[float] = []
            failures = 0
            while (count is None or len(times) < count) and time.monotonic() < stop_at:
                name, method, path, body, headers = a_pages[len(times) % len(a_pages)]
                start = time.perf_counter()
                status, _, answer = call(port, method, path, body, headers)
                times.append((time.perf_counter() - start) * 1000)
                by_page[name].append(times[-1])
                if status != 200 or STOPPED.search(answer):
                    failures += 1
                    refused[f"{name}: {status} {answer[:90].decode(errors='replace')}"] += 1
                time.sleep(0.2)
            return times, failures

        for _ in range(4):  # warm A's pages (the preview's child starts on its first call)
            measure_pages(len(a_pages), time.monotonic() + 120)
        refused.clear()
        idle, idle_failures = measure_a(args.idle, time.monotonic() + 120)
        pages_idle, pages_idle_failures = measure_pages(args.pages_idle, time.monotonic() + 120)

        # B's hammers run in a process of their own: threads beside A's would share the bench's
        # interpreter lock with it, and A's timings would include the bench's own waits for it.
        results: multiprocessing.queues.Queue = multiprocessing.get_context("spawn").Queue()
        stop_at = time.monotonic() + args.seconds
        hammers = multiprocessing.get_context("spawn").Process(
            target=hammer_b,
            args=(port, hammer_calls, args.seconds, args.hammers, results, args.polite, args.client_nice),
        )
        offload_log.flush()
        log_from = offload_log.seek(0, os.SEEK_END)
        hammers.start()
        time.sleep(1)  # B's load is under way
        # A's bot over the first half of B's load, A's pages over the second: A's bot sends one
        # assembly after another, as no real bot does, and the API's pool comes first for the
        # processor by design, so beside it A's pages would measure A's own bot.
        half = stop_at - (args.seconds - 1) / 2
        loaded, loaded_failures = measure_a(None, half)
        pages_loaded, pages_failures = measure_pages(None, stop_at)
        pages_loaded_failures = [pages_failures]
        outcomes = results.get(timeout=120)
        hammers.join()
    finally:
        for server in servers:
            stop_server(server)

    p99_idle, p99_loaded = percentile(idle, 0.99), percentile(loaded, 0.99)
    print(
        f"A idle:       n={len(idle)} p50={percentile(idle, 0.5):.1f} ms p99={p99_idle:.1f} ms max={max(idle):.1f} ms"
    )
    print(
        f"A under load: n={len(loaded)} p50={percentile(loaded, 0.5):.1f} ms p99={p99_loaded:.1f} ms "
        f"max={max(loaded):.1f} ms  failures={idle_failures + loaded_failures}"
    )
    pages_p99_idle, pages_p99_loaded = percentile(pages_idle, 0.99), percentile(pages_loaded, 0.99)
    print(
        f"A's pages idle:       n={len(pages_idle)} p50={percentile(pages_idle, 0.5):.1f} ms "
        f"p99={pages_p99_idle:.1f} ms max={max(pages_idle):.1f} ms"
    )
    print(
        f"A's pages under load: n={len(pages_loaded)} p50={percentile(pages_loaded, 0.5):.1f} ms "
        f"p99={pages_p99_loaded:.1f} ms max={max(pages_loaded):.1f} ms  "
        f"failures={pages_idle_failures + pages_loaded_failures[0]}"
    )
    for name, page_times in by_page.items():
        print(
            f"  A's {name} under load: n={len(page_times)} p50={percentile(page_times, 0.5):.1f} ms "
            f"p99={percentile(page_times, 0.99):.1f} ms max={max(page_times):.1f} ms"
        )
    offload_log.seek(log_from)
    print_offload_log(offload_log.read())
    for answer, times in refused.most_common():
        print(f"A answered {answer!r}: {times} times")
    for name, counts in outcomes.items():
        print(f"B {name}: {counts}")
    ratio = p99_loaded / p99_idle
    pages_ratio = pages_p99_loaded / pages_p99_idle
    print(f"A's p99 under load / idle: bot {ratio:.2f}, pages {pages_ratio:.2f} (bound 3)")
    failed = idle_failures + loaded_failures + pages_idle_failures + pages_loaded_failures[0]
    sys.exit(1 if ratio > 3 or pages_ratio > 3 or failed else 0)


if __name__ == "__main__":
    main()
