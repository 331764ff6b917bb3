"""What the assemble API costs a bot beyond the engine's own work (docs/assembly.md#the-http-path-a-bot-pays).

    .venv/bin/python bench/api_overhead.py [--requests N] [--preset FILE]

Creates a throwaway database (TEST_DATABASE_NAME, default bench_tk_api_overhead; on the PostgreSQL
server DATABASE_URL names, else SQLite) with one server, the preset active (nemoengine-v10 by default),
an API token and a channel holding 200 stored messages. Starts the web server (`python -m
config.serve`, one worker) on a free loopback port with the same database and REDIS_URL (choose your
own Redis DB number; without it each process has its own local-memory cache), warms it, then sends,
one at a time over one kept-open connection (as a bot's HTTP session does), two requests in turn:
the 200 messages in the body, and `"conversation"` naming the stored channel. It prints each one's
wall-clock p50 / p99 seen by the client: on the wire (a plain socket: the time from the request's
first byte sent to the answer's last byte received), and, for comparison, through http.client
(whose parsing of the answer, in Python, is the client's own time).

What the web server and the socket cost on their own is measured, not inferred: a trivial WSGI
application (bench/wsgi_echo.py) is served the same way (`config.serve --app`, one worker) beside
the API, and sent the same request body, answering as many bytes as the assembly, in turn with
the API's requests (so both see the same machine); and an empty GET (the server's fixed cost).

The breakdown is measured in this process on the same database and cache, with the same code: the
engine's own time (`assembly.selectors.assemble_for_server` on an already parsed document), and each
stage of the view around it — the token check (its header, then its entry from the view's one read of
the shared cache), the cache reads (that read, and the per-server caches' lookups, counted and timed), reading and parsing the request JSON, reading the stored conversation, encoding
the answer, saving the channel's state — and the whole request through the API's Django handler
(`config.wsgi.api`: URL routing and the API middleware stack). Beyond the engine = each request's
latency on the wire less its own engine time in the served worker (the API is served through
bench/wsgi_timed.py, the project's application sending that time back in a header), at p50 and p99
(targets ≤ 2 ms and ≤ 5 ms on one worker). What is left
once the handler (in this process) and the web server (measured on the trivial application) are
taken out of the client's p50 is printed as not accounted: the same handler costing more served
than in this process's loop, and waiting for a CPU between the processes a request passes through.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import socket
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("TEST_DATABASE_NAME", "bench_tk_api_overhead")
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("SECURE_HTTPS", "0")
# One server sends every request here, back to back: past a server's CPU share (core/fairness.py).
os.environ["SERVER_CPU_SHARE"] = "1000"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_databases, teardown_databases  # noqa: E402

from bench.corpus_path import CORPUS  # noqa: E402
from bench.load_assemble import group_cpu_seconds  # noqa: E402
from bench.load_assemble import request as http_request  # noqa: E402
from devtools.web_process import free_port, start_server, stop_server, wait_until_up  # noqa: E402

SERVER_ID = 777001  # the id load_assemble.request posts to
ASSEMBLE_PATH = f"/api/v1/servers/{SERVER_ID}/assemble"
ECHO_APP = "bench.wsgi_echo:application"
TIMED_APP = "bench.wsgi_timed:application"  # the project's application, sending each request's engine time
CHANNEL = 1_234_567_890_123_456_789
MESSAGES = 200
TARGET_P50_MS = 2.0
TARGET_P99_MS = 5.0


def fill_channel() -> list[dict[str, Any]]:
    """200 stored messages (a user and the bot in turn); the same history as a bot would send it."""
    from conversations.channels import services as channel_services

    history = []
    for index in range(MESSAGES):
        if index % 2 == 0:
            content = f"Mira asks about the road, the weather and the price of ale at the inn ({index})."
            channel_services.message_post(
                server_id=SERVER_ID,
                channel_id=CHANNEL,
                message_id=1_000_000 + index,
                role="user",
                content=content,
                author_id=42,
                author_name="Mira",
            )
            history.append({"role": "user", "name": "Mira", "content": content})
        else:
            content = f"Tomori answers at length about the road north, the rain and the ferry ({index})."
            channel_services.message_post(
                server_id=SERVER_ID,
                channel_id=CHANNEL,
                message_id=1_000_000 + index,
                role="assistant",
                content=content,
            )
            history.append({"role": "assistant", "name": "Tomori", "content": content})
    return history


class Wire:
    """One kept-open connection to 127.0.0.1:`port`, timed on the wire: a request's bytes are sent
    whole and the answer is read to its last byte (its Content-Length), with no HTTP library."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.engine_ms = 0.0
        self.buffer = bytearray(8 * 1024 * 1024)

    def send(self, method: str, path: str, token: str, body: bytes = b"") -> tuple[int, float, int]:
        """The status, the milliseconds from the first byte sent to the last received, the answer's size;
        the engine's own milliseconds the server said (bench/wsgi_timed.py) in `self.engine_ms`."""
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        data, view = head.encode() + body, memoryview(self.buffer)
        started = time.perf_counter()
        self.sock.sendall(data)
        got, end, need = 0, -1, -1
        while need < 0 or got < need:
            received = self.sock.recv_into(view[got:])
            if not received:
                raise ConnectionError("the server closed the connection")
            got += received
            if need < 0 and (end := self.buffer.find(b"\r\n\r\n", 0, got)) >= 0:
                header = bytes(self.buffer[:end]).decode("latin-1").lower()
                length = header.split("content-length:", 1)[1].split("\r\n", 1)[0]
                need = end + 4 + int(length)
                engine = header.split("x-bench-engine-us:", 1)[1:]
                self.engine_ms = int(engine[0].split("\r\n", 1)[0]) / 1000 if engine else 0.0
        elapsed = (time.perf_counter() - started) * 1000
        return int(self.buffer[9:12]), elapsed, need - end - 4

    def close(self) -> None:
        self.sock.close()


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


class CacheMeter:
    """Counts and times the per-server caches' lookups (GenerationalCache.get) made in this process."""

    def __init__(self) -> None:
        from servers.generational_cache import GenerationalCache

        self.calls = 0
        self.seconds = 0.0
        original = GenerationalCache.get
        meter = self

        def get(cache: Any, key: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(cache, key)
            finally:
                meter.calls += 1
                meter.seconds += time.perf_counter() - started

        GenerationalCache.get = get  # type: ignore[method-assign,assignment]
        self.trips = 0
        try:
            import redis
        except ImportError:
            return
        command = redis.Redis.execute_command

        def counted(client: Any, *args: Any, **options: Any) -> Any:
            meter.trips += 1
            return command(client, *args, **options)

        redis.Redis.execute_command = counted  # type: ignore[method-assign,assignment]

    def reset(self) -> None:
        self.calls, self.seconds, self.trips = 0, 0.0, 0


def environ_for(body: bytes, token: str) -> dict[str, Any]:
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": f"/api/v1/servers/{SERVER_ID}/assemble",
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_AUTHORIZATION": f"Bearer {token}",
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


def stages(body: bytes, token: str, meter: CacheMeter) -> dict[str, float]:
    """One request's stages, each timed in ms (the view's own steps, in its order)."""
    from django.test import RequestFactory

    from assembly.api import REQUEST_FIELDS, _check_options, _keys_for, _ReadKeys, _stored_chat, _without
    from assembly.selectors import assemble_for_server, world_info_channel
    from config.wsgi import api
    from conversations.channels import services as channel_services
    from engine import parse_buckets
    from lorebooks import cache as lorebook_cache
    from lorebooks import services as lorebook_services
    from servers.api_auth import TOKENS, check_bearer, json_response, read_bearer, read_json_body
    from servers.generational_cache import read_together

    out: dict[str, float] = {}

    def clock(name: str, call: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        result = call()
        out[name] = out.get(name, 0.0) + (time.perf_counter() - started) * 1000
        return result

    meter.reset()
    request = RequestFactory().post(
        f"/api/v1/servers/{SERVER_ID}/assemble",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    bearer = clock("auth", lambda: read_bearer(request))  # the header and the refusals' bucket
    meter.reset()
    parsed = clock("json in", lambda: read_json_body(request, max_bytes=4 * 1024 * 1024))
    options = {key: parsed.get(key) for key in REQUEST_FIELDS}
    document = _ReadKeys(_without(parsed, REQUEST_FIELDS))
    _check_options(options)
    # The view's one read of them all: the generations, the channel's World Info timed state, the
    # stored channel's stamp and the token's entry.
    keys = (*_keys_for(SERVER_ID, parsed), TOKENS.entry_key((SERVER_ID, bearer.digest)))
    block = read_together(SERVER_ID, keys)
    clock("cache reads", block.__enter__)
    clock("auth", lambda: check_bearer(bearer, SERVER_ID))  # the token's entry, from that read
    stored = clock("stored conversation", lambda: _stored_chat(SERVER_ID, options, document))
    doc = clock("json in", lambda: parse_buckets(document))
    before = meter.seconds
    engine_cpu = time.process_time()
    assembly = clock(
        "engine",
        lambda: assemble_for_server(
            server_id=SERVER_ID,
            doc=doc,
            channel=options["channel"],
            parent_channel=options["parent_channel"],
            channel_state=True,
        ),
    )
    out["engine cpu"] = (time.process_time() - engine_cpu) * 1000
    out["engine"] -= (meter.seconds - before) * 1000  # its cache lookups are counted as cache reads
    channel = world_info_channel(doc, options["channel"])

    def keep() -> None:
        state = assembly.world_info["state"] if assembly.world_info is not None else None
        # the view's rule: an empty state left empty is not written
        unchanged = not state and not lorebook_cache.read_state(SERVER_ID, channel or "")
        if channel is not None and state is not None and not unchanged:
            lorebook_services.timed_state_save(
                server_id=SERVER_ID, channel=channel, state=assembly.world_info["state"]
            )
        if stored is not None:
            channel_services.render_writes_keep(
                server_id=SERVER_ID,
                channel_id=stored.channel_id,
                before=stored.variables,
                after=assembly.variables,
            )

    clock("channel state kept", keep)
    clock("json out", lambda: json_response(assembly.to_dict()))
    block.__exit__(None, None, None)
    out["cache reads"] += meter.seconds * 1000
    out["cache lookups"] = meter.calls
    environ = environ_for(body, token)
    meter.reset()
    meter.trips = 0

    def whole() -> None:
        chunks = api(environ, lambda status, headers: None)  # type: ignore[arg-type]
        b"".join(chunks)

    cpu = time.process_time()
    clock("handler", whole)
    out["handler cpu"] = (time.process_time() - cpu) * 1000
    out["handler cache reads"] = meter.seconds * 1000
    out["redis trips"] = meter.trips
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=400, help="requests of each kind (default 400)")
    parser.add_argument("--preset", default=str(CORPUS / "pm/nemoengine-v10.json"))
    parser.add_argument("--profile", action="store_true", help="also print where the handler's time goes")
    args = parser.parse_args()
    settings.CACHE_STAMP_LISTENER = (
        False  # its connection would keep the throwaway database from being dropped
    )
    given = os.environ.get("DATABASE_URL", "")
    old = setup_databases(verbosity=0, interactive=False)
    try:
        run(args, given)
    finally:
        connection.close()
        teardown_databases(old, verbosity=0)


def measure_served(
    requests: int, env: dict[str, str], token: str, bodies: dict[str, bytes]
) -> dict[str, Any]:
    """Serve the API and the trivial application (one worker each), warm both, then send each kind
    of request `requests` times, one at a time, each followed by the same body to the trivial
    application answering as many bytes; every fourth round the request again through http.client,
    and each round an empty GET to the trivial application. Latencies (ms) and server CPU (s)."""
    port, echo_port = free_port(), free_port()
    server_process = start_server(port, workers=1, env=env, app=TIMED_APP)
    echo_process = start_server(echo_port, workers=1, env=env, app=ECHO_APP)
    out: dict[str, Any] = {
        key: {name: [] for name in bodies} for key in ("wire", "http.client", "echo", "beyond")
    }
    out["server cpu"] = dict.fromkeys(bodies, 0.0)
    out["echo cpu"] = dict.fromkeys(bodies, 0.0)
    out["empty GET"], out["answer bytes"] = [], {}
    wire = echo_wire = None
    try:
        wait_until_up(port, time.monotonic() + 120)
        wait_until_up(echo_port, time.monotonic() + 120)
        wire, echo_wire = Wire(port), Wire(echo_port)
        for _ in range(40):  # warm: caches, the first render's writes kept
            for name, body in bodies.items():
                status, _, out["answer bytes"][name] = wire.send("POST", ASSEMBLE_PATH, token, body)
                assert status == 200, status
                assert http_request(port, token, body)[0] == 200
                echo_wire.send("POST", f"/echo?bytes={out['answer bytes'][name]}", token, body)
            echo_wire.send("GET", "/echo", token)
        for round_ in range(requests):  # interleaved: every kind sees the same load
            for name, body in bodies.items():
                for target, process, path, key in (
                    (wire, server_process, ASSEMBLE_PATH, "server cpu"),
                    (echo_wire, echo_process, f"/echo?bytes={out['answer bytes'][name]}", "echo cpu"),
                ):
                    cpu = group_cpu_seconds(process.pid)
                    status, ms, _ = target.send("POST", path, token, body)
                    out[key][name] += group_cpu_seconds(process.pid) - cpu
                    assert status == 200, status
                    out["wire" if target is wire else "echo"][name].append(ms)
                    if target is wire:
                        out["beyond"][name].append(ms - wire.engine_ms)
                if round_ % 4 == 0:
                    status, ms = http_request(port, token, body)
                    out["http.client"][name].append(ms)
            out["empty GET"].append(echo_wire.send("GET", "/echo", token)[1])
    finally:
        for connection_ in (wire, echo_wire):
            if connection_ is not None:
                connection_.close()
        stop_server(server_process)
        stop_server(echo_process)
    return out


def run(args: argparse.Namespace, given: str) -> None:
    from core.actors import CLI
    from presets import services as preset_services
    from servers.services import api_token_create, server_ensure

    server = server_ensure(server_id=SERVER_ID, name="Bench", by=CLI)
    preset_services.preset_import(
        server=server, raw=Path(args.preset).read_bytes(), filename=Path(args.preset).name, by=CLI
    )
    _, token = api_token_create(server=server, name="bench", by=CLI)
    history = fill_channel()
    sample = json.loads((ROOT / "assembly" / "default_buckets.json").read_text())
    sample.pop("history", None)
    sample.pop("variables", None)
    sample["seed"] = 1
    bodies = {
        "history in the body": json.dumps({**sample, "history": history, "channel": str(CHANNEL)}).encode(),
        "stored conversation": json.dumps({**sample, "conversation": str(CHANNEL)}).encode(),
    }
    env = {**os.environ, "SERVER_CPU_SHARE": "1000", "DEBUG": "0"}
    if connection.vendor == "postgresql":
        env["DATABASE_URL"] = urlunsplit(
            urlsplit(given)._replace(path="/" + connection.settings_dict["NAME"])
        )
    else:
        env["DATABASE_URL"] = f"sqlite:///{connection.settings_dict['NAME']}"
        connection.close()
    cache_backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]
    served = measure_served(args.requests, env, token, bodies)

    meter = CacheMeter()
    in_process: dict[str, list[dict[str, float]]] = {name: [] for name in bodies}
    for _ in range(20):
        for body in bodies.values():
            stages(body, token, meter)
    for _ in range(max(50, args.requests // 2)):
        for name, body in bodies.items():
            in_process[name].append(stages(body, token, meter))
    from config.wsgi import api

    with CaptureQueriesContext(connection) as captured:  # one whole request, through the handler
        b"".join(api(environ_for(bodies["stored conversation"], token), lambda status, headers: None))  # type: ignore[arg-type]
    queries = (
        f"{len(captured)} ("
        + ", ".join(
            q["sql"].split(" FROM ")[1].split()[0] if " FROM " in q["sql"] else q["sql"][:30]
            for q in captured
        )
        + ")"
    )
    if args.profile:
        import cProfile
        import pstats

        for name, body in bodies.items():
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(100):
                stages(body, token, meter)
            profile.disable()
            print(f"--- {name}: 100 requests in process, by cumulative time")
            pstats.Stats(profile).sort_stats("cumulative").print_stats(45)

    print(
        f"POST /api/v1/servers/<id>/assemble through config.serve (1 worker), {Path(args.preset).stem}, "
        f"{MESSAGES} messages; database {connection.vendor}, cache {cache_backend}; {args.requests} requests "
        "of each kind, one at a time, warm"
    )
    for name in bodies:
        print_kind(name, len(bodies[name]), served, in_process[name])
    empty = served["empty GET"]
    print(
        f"\nthe web server's fixed cost (an empty GET to the trivial application, on the wire): "
        f"p50 {percentile(empty, 0.5):.2f}  p99 {percentile(empty, 0.99):.2f} ms"
    )
    print(f"\nqueries of a warm stored-conversation request: {queries}")


def print_kind(name: str, size: int, served: dict[str, Any], rows: list[dict[str, float]]) -> None:
    """One kind of request's figures: on the wire, the engine, the stages in process, the web server."""
    wire, echo = served["wire"][name], served["echo"][name]

    def column(stage: str) -> list[float]:
        return [row.get(stage, 0.0) for row in rows]

    def p50_p99(samples: list[float]) -> str:
        return f"p50 {percentile(samples, 0.5):6.2f}  p99 {percentile(samples, 0.99):6.2f} ms"

    engine, beyond = column("engine"), served["beyond"][name]
    beyond_p50, beyond_p99 = percentile(beyond, 0.5), percentile(beyond, 0.99)
    print(f"\n{name} ({size / 1024:.0f} KiB request, {served['answer bytes'][name] / 1024:.0f} KiB answer)")
    print(f"  client, on the wire:             {p50_p99(wire)}")
    print(
        f"  client through http.client:      {p50_p99(served['http.client'][name])}  "
        "(its parsing is the client's time)"
    )
    print(
        f"  engine (its own work):           {p50_p99([w - b for w, b in zip(wire, beyond, strict=True)])}  "
        f"(served; in this process {p50_p99(engine)})"
    )
    verdict = "ok" if beyond_p50 <= TARGET_P50_MS and beyond_p99 <= TARGET_P99_MS else "OVER"
    print(
        f"  beyond the engine:               p50 {beyond_p50:6.2f}  p99 {beyond_p99:6.2f} ms  "
        f"(each request's latency less its own engine time; targets {TARGET_P50_MS:.0f} / "
        f"{TARGET_P99_MS:.0f} ms: {verdict})"
    )
    print("  in this process, medians (ms):")
    staged = 0.0
    for stage in ("auth", "json in", "stored conversation", "cache reads", "channel state kept", "json out"):
        value = statistics.median(column(stage))
        staged += value
        print(f"    {stage:<31} {value:6.3f}")
    print(
        f"      (cache reads: the one read of them all, the token's entry included, and "
        f"{statistics.median(column('cache lookups')):.0f} per-server cache lookups besides the token's "
        "(in auth, from that read); the engine's are taken out of its time)"
    )
    handler = statistics.median(column("handler"))
    print(
        f"    round trips to Redis            {statistics.median(column('redis trips')):6.0f}  "
        "(the whole request through the handler)"
    )
    print(f"    whole request, API handler      {handler:6.3f}")
    print(
        f"    routing, middleware, the rest   {handler - staged - statistics.median(engine):6.3f}  "
        "(the handler less the stages and the engine)"
    )
    web = percentile(echo, 0.5)
    print(
        f"    the web server and the socket   {web:6.3f}  (measured: the trivial application served the same "
        f"way, this body in, as many bytes out; its p99 {percentile(echo, 0.99):.2f})"
    )
    print(
        f"    not accounted                   {percentile(wire, 0.5) - handler - web:6.3f}  "
        "(client p50 less the handler and the web server: the served handler's cost above this "
        "process's, and waits for a CPU)"
    )
    per_request = served["server cpu"][name] * 1000 / len(wire)
    engine_cpu = statistics.median(column("engine cpu"))
    print(
        f"  CPU per request (what machine load hardly changes): the server process {per_request:.2f} ms "
        f"(sampled every 10 ms: a mean), the engine {engine_cpu:.2f} ms (its cache lookups included), "
        f"beyond it {per_request - engine_cpu:.2f} ms; the API handler in process "
        f"{statistics.median(column('handler cpu')):.2f} ms; the trivial application's server "
        f"{served['echo cpu'][name] * 1000 / len(echo):.2f} ms"
    )


if __name__ == "__main__":
    main()
