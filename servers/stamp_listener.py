"""Generation bumps pushed by PostgreSQL to every process (issue 35, item 9).

A write bumps a stamp inside its transaction (servers/generational_cache.py) and copies the new
number to Redis after the commit; a process that reads Redis sees it on its next request. When
Redis missed that copy (down at the time, the writer died between commit and copy, a restored
snapshot), other processes used to learn it only at their next database check, up to
`CACHE_STAMP_CHECK_SECONDS` later — for a revoked token, that many seconds of it still working.

So the bump also sends `NOTIFY tk_cache_stamps, '<server>:<stamp>:<generation>'` in the same
transaction (PostgreSQL delivers it at the commit, never for a rolled-back write), and each web
process keeps one connection listening on a background thread that records the number as seen.
The next request of that process then finds Redis's copy behind what it has seen, writes it back
and reloads: a revoked token fails there within the delivery time (milliseconds), and a request
pays nothing for it (no query, no round trip: the thread does the work). With SQLite there is one
process and nothing to listen to; while the listening connection is down the periodic check
remains the bound.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection

log = logging.getLogger("tavernkeep.cache")
CHANNEL = "tk_cache_stamps"

_lock = threading.Lock()
_listening_pid: int | None = None
_thread: threading.Thread | None = None
healthy = threading.Event()  # set while the listening connection is up


def notify(server_id: int, stamp: str, generation: int) -> None:
    """Queue the bump's notification in the current transaction (PostgreSQL only)."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, f"{server_id}:{stamp}:{generation}"])


def ensure_listening(on_bump: Callable[[int, str, int], None]) -> None:
    """Start this process's listener once (again after a fork: threads do not survive one)."""
    global _listening_pid, _thread
    if _listening_pid == os.getpid() or not getattr(settings, "CACHE_STAMP_LISTENER", True):
        return
    with _lock:
        if _listening_pid == os.getpid() or connection.vendor != "postgresql":
            return
        _listening_pid = os.getpid()
        healthy.clear()
        database = connection.settings_dict
        params = {
            "dbname": database["NAME"],
            "user": database.get("USER") or None,
            "password": database.get("PASSWORD") or None,
            "host": database.get("HOST") or None,
            "port": database.get("PORT") or None,
        }
        thread = threading.Thread(
            target=_listen, args=({k: v for k, v in params.items() if v}, on_bump), daemon=True
        )
        thread.name = "cache-stamp-listener"
        thread.start()
        _thread = thread


def _listen(params: dict[str, Any], on_bump: Callable[[int, str, int], None]) -> None:
    import psycopg

    pid = os.getpid()
    while _listening_pid == pid:
        try:
            with psycopg.connect(**params, autocommit=True, connect_timeout=2) as conn:
                conn.execute(f"LISTEN {CHANNEL}")
                healthy.set()
                while _listening_pid == pid:  # wakes every second to see whether to stop
                    for note in conn.notifies(timeout=1.0):
                        server, stamp, generation = note.payload.split(":")
                        on_bump(int(server), stamp, int(generation))
                return
        except Exception as exc:  # the database went away: the periodic check covers the gap
            healthy.clear()
            log.warning("cache stamp listener disconnected, retrying in 1 s: %s", exc)
            time.sleep(1)


def stop_listening() -> None:
    """Stop this process's listener and close its connection (tests, before their database goes)."""
    global _listening_pid, _thread
    with _lock:
        thread, _listening_pid, _thread = _thread, None, None
    healthy.clear()
    if thread is not None:
        thread.join(timeout=3)
