"""Serve the project over HTTP: the one way `make run`, docker compose, the benchmarks and the
two-instance tests start a web process.

    python -m config.serve [--bind HOST:PORT] [--workers N] [--threads N] [--nice N] [--access-log]
                           [--app MODULE:CALLABLE]

granian (an HTTP server written in Rust) reads and writes the sockets, keeps connections alive and
calls Django through WSGI. The bot sends many small requests over one connection, and its proxy
(Caddy) reuses its connections to us: a server that closed every connection made each request
pay for a new one on both sides.

Before the workers are forked the application is loaded and warmed here, in the parent
(assembly/warmup.py): every worker, at start or as a replacement of one that died, begins with the
views imported, the token tables loaded and the active presets compiled. `--workers` defaults to
WEB_CONCURRENCY (else 2, about one per core); `--threads` is how many requests one worker runs at
once (1 for the bot's API: one request per core is the fastest way through). `--nice` lowers the
priority of the dashboard's pool where it shares a machine with the API's (docs/scaling.md#two-pools).

The dashboard's pool runs several threads per worker, and is sized so that one server cannot fill
it (issue 50, item 2): a server runs at most SERVER_CONCURRENT_WORK_PER_PROCESS requests at once in
a process, so a worker with more than one thread and fewer than twice that many is warned about at
start (`pool_warning`): one server could take half its threads or more, and the other servers'
pages would queue behind it. docker-compose.yml's `web` pool runs 4 threads a worker (twice the
default share of 2).

A worker that dies is replaced, and the pool never exits while its parent lives
(docs/scaling.md#a-pool-that-never-exits): granian's own supervisor gives up ("crash loop detected")
when a worker dies again within about 5 s of its replacement; `KeepServing` waits a back-off
instead (0.5 s, doubling to at most 30 s while the worker keeps dying young), logs each death, and
starts the next one.

`--app` serves another WSGI application through the same server, set up the same way: the HTTP
benchmark (bench/api_overhead.py) serves a trivial one to measure what the web server and the socket
cost on their own.
"""

from __future__ import annotations

import argparse
import errno
import gc
import logging
import os
import socket
import sys
import time
from typing import Any

DEFAULT_BIND = "127.0.0.1:8000"
DEFAULT_APP = "config.wsgi:application"
BACKOFF_FIRST_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 30.0
LIVED_LONG_SECONDS = 60.0  # a worker that served this long before dying starts the back-off over
# Python's young collection runs once 700 more container objects were made than freed; an assembly's
# answer (200 messages with their sources) holds more than that at once, so every request paid one
# or two collections walking it (0.1 ms, docs/assembly.md#the-http-path-a-bot-pays). Reference
# counting frees a request's objects anyway; the collector is for cycles, which this many still bounds.
YOUNG_COLLECTION_THRESHOLD = 20_000

log = logging.getLogger("tavernkeep.serve")


def backoff_seconds(deaths_in_a_row: int) -> float:
    """How long to wait before replacing a worker that died young `deaths_in_a_row` times."""
    return min(BACKOFF_MAX_SECONDS, BACKOFF_FIRST_SECONDS * 2 ** max(0, deaths_in_a_row - 1))


def pool_warning(threads: int, share: int) -> str | None:
    """A sentence when a worker of `threads` threads could be half filled by one server whose share
    is `share` requests at once; None when it cannot, or for a one-thread pool (the bot's API)."""
    if threads <= 1 or threads >= 2 * share:
        return None
    return (
        f"each worker runs {threads} requests at once and one server may run {share} of them "
        f"(SERVER_CONCURRENT_WORK_PER_PROCESS): give the dashboard's pool at least {2 * share} "
        "threads, so that one server's pages cannot fill it"
    )


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m config.serve", description="Serve Tavernkeep over HTTP.")
    parser.add_argument("--bind", default=DEFAULT_BIND, metavar="HOST:PORT", help=f"default {DEFAULT_BIND}")
    parser.add_argument(
        "--workers",
        type=_positive,
        help="worker processes (default: WEB_CONCURRENCY, else 2)",
    )
    parser.add_argument(
        "--threads", type=_positive, default=1, help="requests one worker runs at once (default 1)"
    )
    parser.add_argument(
        "--check-bind", action="store_true", help="only check that the port is free (make run does, first)"
    )
    parser.add_argument(
        "--nice",
        type=_niceness,
        default=0,
        help="lower this pool's CPU priority by N, 0-19 (the dashboard's pool: the bot's API pool is served first)",
    )
    parser.add_argument(
        "--access-log",
        action="store_true",
        default=os.environ.get("ACCESS_LOG", "").strip().lower() in ("1", "true", "yes", "on"),
        help="log every request to standard output (default: the ACCESS_LOG environment variable)",
    )
    parser.add_argument(
        "--log-level", default="warning", choices=["debug", "info", "warning", "error", "critical"]
    )
    parser.add_argument(
        "--app",
        default=DEFAULT_APP,
        metavar="MODULE:CALLABLE",
        help=f"the WSGI application (default {DEFAULT_APP})",
    )
    args = parser.parse_args(argv)
    host, _, port = args.bind.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        parser.error(f"--bind must be HOST:PORT, not {args.bind!r}")
    args.host, args.port = host.strip("[]"), int(port)
    if args.workers is None:
        try:
            args.workers = _positive(os.environ.get("WEB_CONCURRENCY", "2"))
        except argparse.ArgumentTypeError as exc:
            parser.error(f"WEB_CONCURRENCY: {exc}")
    return args


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive whole number")
    return int(value)


def _niceness(value: str) -> int:
    if not value.isdigit() or int(value) > 19:
        raise argparse.ArgumentTypeError(f"{value!r} is not a niceness from 0 to 19")
    return int(value)


def refuse_a_port_in_use(host: str, port: int) -> None:
    """Exit at once, non-zero, with one line naming the port when something already listens there.

    granian binds with SO_REUSEPORT, so a second server on the same port would start anyway and the
    kernel would share the connections between the two. A plain bind (no SO_REUSEPORT) fails when
    anyone listens there; SO_REUSEADDR keeps a port left in TIME_WAIT usable.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    probe = socket.socket(family, socket.SOCK_STREAM)
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))
    except OSError as exc:
        reason = "it is already in use" if exc.errno == errno.EADDRINUSE else exc.strerror
        print(f"config.serve: cannot listen on {host}:{port}: {reason}.", file=sys.stderr)
        sys.exit(1)
    finally:
        probe.close()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    refuse_a_port_in_use(args.host, args.port)
    if args.check_bind:
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if args.nice:
        os.nice(args.nice)  # before the workers are forked: they, and the children they start, inherit it

    # Imported only once the arguments are good: Django is set up here, and the workers inherit it.
    from django.conf import settings

    import config.wsgi  # noqa: F401
    from assembly.warmup import warm_process

    warning = pool_warning(args.threads, int(getattr(settings, "SERVER_CONCURRENT_WORK_PER_PROCESS", 2)))
    if warning:
        log.warning("%s", warning)
    warm_process()
    # What the warm-up made lives as long as the process: out of the collector's reach, so a
    # request's collections do not walk it and the forked workers do not copy its pages.
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])

    from granian.constants import Interfaces, RuntimeModes
    from granian.log import LogLevels

    logging.basicConfig(format="[%(levelname)s] %(name)s: %(message)s")
    keep_serving_class()(
        args.app,
        address=args.host,
        port=args.port,
        interface=Interfaces.WSGI,
        workers=args.workers,
        blocking_threads=args.threads,
        runtime_mode=RuntimeModes.st,
        log_level=LogLevels(args.log_level),
        log_access=args.access_log,
        respawn_failed_workers=True,  # a worker that dies is replaced, already warm (forked from here)
        workers_kill_timeout=20,  # a stop lets requests in flight finish, for at most this long
    ).serve()


def keep_serving_class() -> type[Any]:
    """granian's process server, made to replace dead workers with a back-off and never to exit."""
    from granian import Granian

    class KeepServing(Granian):  # type: ignore[misc, valid-type]
        def _respawn_workers(self, workers: list[int], *args: Any, delay: float = 0, **kwargs: Any) -> None:
            # granian passes no delay for a worker that died, and its respawn interval for a reload
            # or a worker's end of life: only the first are deaths.
            if delay == 0:
                for idx in workers:
                    wait = self._note_death(idx)
                    log.warning(
                        "web worker %d died; starting a new one in %.1f s (the pool keeps serving)",
                        idx + 1,
                        wait,
                    )
                    deadline = time.monotonic() + wait
                    while not self.interrupt_signal and time.monotonic() < deadline:
                        time.sleep(0.05)
                    if self.interrupt_signal:
                        return  # stopping: no new worker
            super()._respawn_workers(workers, *args, delay=delay, **kwargs)
            for idx in workers:
                # granian exits when a worker it respawned dies again within about 5 s; the back-off
                # above takes that decision's place, so granian never sees a recent respawn.
                self.respawned_wrks.pop(idx, None)

        def _note_death(self, idx: int) -> float:
            deaths: dict[int, tuple[int, float]] = self.__dict__.setdefault("_tk_deaths", {})
            now = time.monotonic()
            count, last = deaths.get(idx, (0, 0.0))
            count = 1 if now - last > LIVED_LONG_SECONDS + BACKOFF_MAX_SECONDS else count + 1
            deaths[idx] = (count, now)
            return backoff_seconds(count) if count > 1 else 0.0

    return KeepServing


if __name__ == "__main__":
    main()
