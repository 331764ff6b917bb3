"""The compose stack of docker-compose.yml, started for real under podman by `deploy/stack.sh` (what
`make compose-up` runs): PostgreSQL, Redis, the migration, the API and dashboard pools, Caddy, a
Celery worker and beat, each in its own container, reached only through Caddy's published port.

The tests run in file order on one stack: alice signs in, the bot calls its API, beat's schedule
expires a memory entry, a web container and PostgreSQL are killed, the dashboard pool is scaled
to three, and the whole stack goes down and comes back up with its data. Each prints its figures
(docs/scaling.md#the-compose-stack quotes them).

Run with COMPOSE_STACK=1 (tests/stack/conftest.py); `.ci/run` does, in its own step.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlencode

import pytest

from devtools.web_process import ROOT, free_port

STACK = ROOT / "deploy" / "stack.sh"
BUCKETS = (ROOT / "assembly" / "default_buckets.json").read_bytes()
PROJECT = "tkstack"
LANTERN = 1001
FIGURES: dict[str, str] = {}


def podman(*args: str, timeout: float = 120, check: bool = True) -> str:
    done = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout, check=False)
    if check and done.returncode:
        raise AssertionError(f"podman {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout.strip()


def logs(name: str) -> str:
    """A container's output, both streams (`podman logs` passes its standard error through as its own)."""
    done = subprocess.run(["podman", "logs", name], capture_output=True, text=True, timeout=60, check=False)
    return done.stdout + done.stderr


def containers(service: str, *, running: bool = True) -> list[str]:
    listing = podman(
        "ps",
        *(() if running else ("-a",)),
        "--filter",
        f"label=com.docker.compose.project={PROJECT}",
        "--filter",
        f"label=com.docker.compose.service={service}",
        "--format",
        "{{.Names}}",
    )
    return sorted(listing.split())


def psql(sql: str) -> str:
    (postgres,) = containers("postgres")
    return podman("exec", postgres, "psql", "-U", "tavernkeep", "-d", "tavernkeep", "-tAc", sql)


def manage(*args: str) -> str:
    return podman("exec", containers("api")[0], "python", "manage.py", *args)


def wait_until(what: str, check, seconds: float, every: float = 0.5):
    deadline = time.monotonic() + seconds
    while True:
        try:
            result = check()
        except (OSError, AssertionError, http.client.HTTPException):
            result = None
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:.0f} s")
        time.sleep(every)


@dataclass
class Stack:
    port: int
    env: dict[str, str]
    token: str = ""

    def run(self, *args: str, timeout: float = 1800) -> float:
        """deploy/stack.sh ARGS with this stack's settings; the seconds it took."""
        started = time.monotonic()
        done = subprocess.run(
            [str(STACK), *args], env=self.env, capture_output=True, text=True, timeout=timeout, check=False
        )
        if done.returncode:
            raise AssertionError(f"deploy/stack.sh {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return time.monotonic() - started

    def call(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, http.client.HTTPMessage, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.headers, response.read()
        finally:
            conn.close()

    def bot(self, method: str, path: str, payload: object = None) -> tuple[int, bytes]:
        body = BUCKETS if payload is None and method == "POST" else json.dumps(payload).encode()
        status, _, answer = self.call(
            method,
            f"/api/v1/servers/{LANTERN}/{path}",
            body if method == "POST" else None,
            {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        return status, answer

    def store_turn(self, channel: int, content: str) -> int:
        turn = {"channel": channel, "user": 424242, "messages": [{"role": "user", "content": content}]}
        return self.bot("POST", "stm/turns", turn)[0]


@dataclass
class Browser:
    stack: Stack
    cookies: dict[str, str] = field(default_factory=dict)

    def call(self, method: str, path: str, form: dict[str, str] | None = None) -> tuple[int, str, str]:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["X-CSRFToken"] = self.cookies.get("csrftoken", "")
        status, answer_headers, page = self.stack.call(method, path, body, headers)
        for raw in answer_headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(raw).items():
                self.cookies[name] = morsel.value
        return status, answer_headers.get("Location", ""), page.decode()

    def sign_in(self, username: str, password: str) -> tuple[int, str]:
        _, _, page = self.call("GET", "/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        form = {"username": username, "password": password, "csrfmiddlewaretoken": token}
        status, location, _ = self.call("POST", "/login/", form)
        return status, location


@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest) -> Iterator[Stack]:
    if not shutil.which("podman"):
        pytest.fail("COMPOSE_STACK=1 needs podman and podman-compose (.ci/run installs them)")
    port = free_port()
    env = {
        **os.environ,
        "ENGINE": "podman",
        "COMPOSE_PROJECT_NAME": PROJECT,
        "HTTP_PORT": str(port),
        "HTTPS_PORT": str(free_port()),
        "PUBLISH_ADDRESS": "127.0.0.1",
        "SECRET_KEY": f"compose-stack-test-{uuid.uuid4().hex}",
        "STM_EXPIRY_INTERVAL_SECONDS": "5",
        "ACCESS_LOG": "1",
        "API_REPLICAS": "2",
        "WEB_REPLICAS": "1",
        "WORKER_REPLICAS": "1",
        "WORKER_CONCURRENCY": "1",
        "WEB_CONCURRENCY": "1",
    }
    for name in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"):
        env.pop(name, None)
    stack = Stack(port=port, env=env)
    stack.run("down", "-v")  # what an interrupted run left
    build = stack.run("build")
    FIGURES["build: seconds"] = f"{build:.0f}"
    FIGURES["up, images built: seconds to both pools served through Caddy"] = f"{stack.run('up'):.0f}"
    for name in (
        "tavernkeep",
        "tavernkeep-python",
        "tavernkeep-postgres",
        "tavernkeep-redis",
        "tavernkeep-caddy",
    ):
        size = podman("images", "--format", "{{.Size}}", f"localhost/{name}", check=False).splitlines()
        if size:
            FIGURES[f"image {name}"] = size[0]
    manage("demo_data")
    stack.token = json.loads(manage("token", "create", "--server", str(LANTERN), "--name", "bot", "--json"))[
        "token"
    ]
    try:
        yield stack
    finally:
        if request.session.testsfailed:
            print(podman("ps", "-a", "--filter", f"label=com.docker.compose.project={PROJECT}", check=False))
            for name in podman(
                "ps",
                "-a",
                "--filter",
                f"label=com.docker.compose.project={PROJECT}",
                "--format",
                "{{.Names}}",
            ).split():
                print(f"--- {name}\n" + "\n".join(logs(name).splitlines()[-15:]))
        stack.run("down", "-v")
        print("\ncompose stack figures:\n" + "\n".join(f"  {k}: {v}" for k, v in FIGURES.items()))


def test_alice_signs_in_and_previews_through_caddy(stack):
    alice = Browser(stack)
    status, location, _ = alice.call("GET", f"/servers/{LANTERN}/")
    assert status == 302 and location.startswith("/login/")
    assert alice.sign_in("alice", "tavern-demo") == (302, "/")
    status, _, page = alice.call("GET", f"/servers/{LANTERN}/preview/")
    assert status == 200
    assert "Mira: Is it... a secret?" in page  # the default sample, assembled by the engine
    assert Browser(stack).sign_in("alice", "wrong horse")[0] == 200  # the form again, not signed in


def test_the_bots_api_goes_through_caddy_to_the_api_pool_alone(stack):
    status, answer = stack.bot("POST", "assemble")
    assert status == 200 and json.loads(answer)["messages"]
    web = containers("web")
    podman("pause", *web)
    try:
        started = time.monotonic()
        assert stack.bot("POST", "assemble")[0] == 200  # the dashboard's containers are frozen
        FIGURES["assemble through Caddy with the web pool frozen: ms"] = (
            f"{(time.monotonic() - started) * 1000:.0f}"
        )
    finally:
        podman("unpause", *web)
    api = containers("api")
    assert len(api) == 2
    podman("pause", *api)
    try:
        assert Browser(stack).call("GET", "/login/")[0] == 200  # and the other way round
    finally:
        podman("unpause", *api)
    assert stack.bot("POST", "assemble")[0] == 200


def test_an_old_memory_entry_is_expired_by_the_worker_on_beats_schedule(stack):
    old, fresh = 5_000_001, 5_000_002
    assert stack.store_turn(old, "an old whisper") == 200
    assert stack.store_turn(fresh, "a fresh whisper") == 200
    where = "channel_id IN (SELECT id FROM servers_channel WHERE discord_id = {})"
    assert (
        psql(f"UPDATE memory_stmentry SET updated_at = now() - interval '3 days' WHERE {where.format(old)}")
        == "UPDATE 1"
    )
    started = time.monotonic()
    wait_until(
        "the old entry deleted",
        lambda: psql(f"SELECT count(*) FROM memory_stmentry WHERE {where.format(old)}") == "0",
        60,
    )
    FIGURES["old STM entry deleted after: seconds (beat every 5 s)"] = f"{time.monotonic() - started:.1f}"
    assert psql(f"SELECT count(*) FROM memory_stmentry WHERE {where.format(fresh)}") == "1"
    (worker,) = containers("worker")
    (beat,) = containers("beat")
    assert "Sending due task expire-short-term-memory" in logs(beat)
    assert re.search(r"Task memory\.tasks\.expire_stm_entries\[[^]]+\] succeeded", logs(worker))


def test_a_killed_web_container_is_restarted_and_serves_again(stack):
    (web,) = containers("web")
    before = podman("inspect", web, "--format", "{{.State.StartedAt}}")
    # SIGKILL to the container's first process, as a crash or the kernel's OOM killer would (a
    # `podman kill` or `docker kill` counts as stopped by hand: no restart policy applies to it).
    os.kill(int(podman("inspect", web, "--format", "{{.State.Pid}}")), signal.SIGKILL)
    killed = time.monotonic()
    assert stack.bot("POST", "assemble")[0] == 200  # the bot's pool is not touched
    wait_until(
        "the web container restarted",
        lambda: (
            podman("inspect", web, "--format", "{{.State.Running}} {{.State.StartedAt}}") != f"true {before}"
            and podman("inspect", web, "--format", "{{.State.Running}}") == "true"
        ),
        60,
    )
    restarted = time.monotonic() - killed
    wait_until("a page through Caddy", lambda: Browser(stack).call("GET", "/login/")[0] == 200, 120)
    FIGURES["web container SIGKILLed: seconds to restarted / to a page served again"] = (
        f"{restarted:.1f} / {time.monotonic() - killed:.1f}"
    )
    assert podman("inspect", web, "--format", "{{.RestartCount}}") != "0"


def test_postgres_killed_for_10_seconds_loses_no_write_that_was_answered(stack):
    answers: list[tuple[int, int, float]] = []  # (channel, status, when it was answered)
    slowest = [0.0]
    stop = threading.Event()

    def write() -> None:
        channel = 6_000_000
        while not stop.is_set():
            channel += 1
            asked = time.monotonic()
            try:
                status = stack.store_turn(channel, f"turn {channel}")
            except (OSError, http.client.HTTPException):
                status = 0  # no answer within the client's 30 s
            answers.append((channel, status, time.monotonic()))
            slowest[0] = max(slowest[0], time.monotonic() - asked)
            time.sleep(0.05)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    time.sleep(2)
    (postgres,) = containers("postgres")
    podman("stop", "-t", "0", postgres)  # SIGKILL, and no restart by the policy: down for 10 s
    down_at = time.monotonic()
    time.sleep(1)
    lookup = time.monotonic()  # what a web process meets first: the stopped container's name
    podman("exec", containers("api")[0], "getent", "hosts", "postgres", check=False, timeout=60)
    FIGURES["PostgreSQL down: seconds to look its name up from an api container"] = (
        f"{time.monotonic() - lookup:.1f}"
    )
    time.sleep(max(0.0, down_at + 10 - time.monotonic()))
    podman("start", postgres)
    up_at = time.monotonic()
    wait_until(
        "PostgreSQL",
        lambda: podman("exec", postgres, "pg_isready", "-U", "tavernkeep", check=False).endswith(
            "accepting connections"
        ),
        60,
    )
    wait_until(
        "answered writes after PostgreSQL is back",
        lambda: sum(1 for _, s, t in answers if s == 200 and t > up_at) >= 5,
        90,
    )
    stop.set()
    writer.join(30)

    answered = [channel for channel, status, _ in answers if status == 200]
    refused = [status for _, status, when in answers if status != 200]
    kept = psql(
        "SELECT count(DISTINCT c.discord_id) FROM memory_stmentry e JOIN servers_channel c ON c.id = e.channel_id "
        f"WHERE c.owner_id = {LANTERN} AND c.discord_id IN ({','.join(map(str, answered))})"
    )
    first_after = min(t for _, s, t in answers if s == 200 and t > up_at) - up_at
    FIGURES["PostgreSQL SIGKILLed for 10 s: writes / answered 200 / kept / refused statuses"] = (
        f"{len(answers)} / {len(answered)} / {kept} / {sorted(set(refused))}"
    )
    FIGURES["PostgreSQL back: seconds to the first answered write; slowest answer"] = (
        f"{first_after:.1f}; {slowest[0]:.1f}"
    )
    assert int(kept) == len(answered)
    assert any(down_at < when < up_at for _, status, when in answers if status != 200)  # the outage was real
    assert 500 not in refused


def _served_by(web: list[str], marker: str) -> dict[str, int]:
    return {name: logs(name).count(marker) for name in web}


def test_three_dashboard_containers_behind_caddy_share_the_requests(stack):
    started = time.monotonic()
    stack.run("scale", "web=3")
    web = containers("web")
    assert len(web) == 3
    for name in web:
        wait_until(
            f"{name} healthy",
            lambda name=name: (
                podman(
                    "exec",
                    name,
                    "python",
                    "-c",
                    "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=3)",
                    check=False,
                    timeout=30,
                )
                == ""
            ),
            180,
            every=2,
        )
    FIGURES["scale web=3: seconds to three healthy containers"] = f"{time.monotonic() - started:.0f}"
    marker = f"/servers/{uuid.uuid4().int % 10**6 + 7 * 10**6}"
    time.sleep(6)  # Caddy asks the network's DNS for the pool every 5 s

    def spread() -> dict[str, int] | None:
        before = _served_by(web, marker)
        for n in range(60):
            assert Browser(stack).call("GET", f"{marker}{n:03d}/")[0] == 302
        counts = {name: count - before[name] for name, count in _served_by(web, marker).items()}
        return counts if all(c >= 5 for c in counts.values()) else None

    counts = wait_until("requests on all three containers", spread, 60, every=5)
    FIGURES["60 requests over three web containers"] = " / ".join(str(c) for c in counts.values())


def test_the_data_is_kept_across_down_and_up(stack):
    alice = Browser(stack)
    assert alice.sign_in("alice", "tavern-demo") == (302, "/")
    assert stack.store_turn(5_000_003, "kept across a restart") == 200
    stack.run("down")
    assert containers("postgres", running=False) == []
    assert containers("web", running=False) == []
    FIGURES["up again after down (volumes kept): seconds"] = f"{stack.run('up'):.0f}"
    assert alice.call("GET", f"/servers/{LANTERN}/")[0] == 200  # the session is still in PostgreSQL
    status, answer = stack.bot("GET", "stm/entries?channel=5000003")
    assert status == 200
    (entry,) = json.loads(answer)["entries"]
    assert entry["messages"][0]["content"] == "kept across a restart"
    assert len(containers("web")) == 1  # WEB_REPLICAS again, the scaled-up containers are gone
