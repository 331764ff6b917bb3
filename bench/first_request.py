"""The first assemble request a fresh web server answers, with the active preset the heaviest kind.

    .venv/bin/python bench/first_request.py [--preset FILE] [--starts N]

Sets up a throwaway SQLite database (one server, the preset active, an API token), then N times:
starts the web server (one worker) on 127.0.0.1, waits until it accepts connections, sends one assemble
request (the default sample) at once and stops the server. Prints the start-up time (launch to
accepting) and the first request's latency; target <= 200 ms for the first request.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root, for bench/ and devtools

from bench.corpus_path import CORPUS
from bench.load_assemble import (
    PYTHON,
    ROOT,
    SERVER_ID,
    SETUP,
    free_port,
    request,
    run,
    start_server,
    wait_until_up,
)

TARGET_MS = 200


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default=str(CORPUS / "pm/nemoengine-v10.json"))
    parser.add_argument("--starts", type=int, default=3)
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="tk-first-")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp.name}/first.sqlite3", "DEBUG": "0"}
    env.pop("REDIS_URL", None)
    run([PYTHON, "manage.py", "migrate", "-v0"], env)
    run([PYTHON, "manage.py", "preset", "import", args.preset, "--server", str(SERVER_ID), "--json"], env)
    token = (
        run([PYTHON, "manage.py", "shell", "-c", SETUP.format(server_id=SERVER_ID)], env)
        .strip()
        .splitlines()[-1]
    )
    body = (ROOT / "assembly" / "default_buckets.json").read_bytes()
    startups, firsts, seconds = [], [], []
    try:
        for _ in range(args.starts):
            port = free_port()
            launched = time.perf_counter()
            server = start_server(port, workers=1, env=env)
            try:
                wait_until_up(port, time.monotonic() + 120)
                startups.append((time.perf_counter() - launched) * 1000)
                status, first = request(port, token, body, keep_alive=False)
                if status != 200:
                    raise SystemExit(f"the first request failed with HTTP {status}")
                firsts.append(first)
                seconds.append(request(port, token, body, keep_alive=False)[1])
            finally:
                os.killpg(server.pid, signal.SIGTERM)
                server.wait(timeout=30)
    finally:
        tmp.cleanup()
    print(
        f"fresh web server (1 worker), preset {Path(args.preset).name} active, default sample; {args.starts} starts"
    )
    print(f"launch to accepting connections: median {statistics.median(startups):.0f} ms")
    print(
        f"first assemble request: median {statistics.median(firsts):.0f} ms, max {max(firsts):.0f} ms"
        f"   target <= {TARGET_MS} ms"
    )
    print(f"second request: median {statistics.median(seconds):.0f} ms")


if __name__ == "__main__":
    main()
