"""The one way a service writes something a server's caches hold: `server_write` (docs/architecture.md,
"Cache freshness").

    with server_write(server_id=server.pk, stamps=(preset_cache.STAMP,), lock=True):
        ...  # the rows change here

It opens one transaction, locks the server's row first when `lock` (two admins clicking at once are
then serialised), runs the body, and bumps the named stamps (servers/generational_cache.py, `bump`)
as the transaction's last statements, before it commits. So the stamps move exactly when the rows
do: a body that raises, or a bump that fails, rolls the whole write back, and a process that dies
after the commit has nothing left to do (the new numbers reach the shared cache by the bump's own
commit hook, and other processes also learn them from the database).

A body that decides late what changed calls `write.touch(stamp)`; a body that changed nothing
(an early `return`) touches nothing and bumps nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.db import transaction

from .generational_cache import bump
from .imports import lock_server


@dataclass
class ServerWrite:
    """The write in progress: the server and the stamps it will bump when the body ends."""

    server_id: int
    stamps: set[str] = field(default_factory=set)

    def touch(self, *stamps: str) -> None:
        """Bump `stamps` too when this write commits (inside its transaction, like the others)."""
        self.stamps.update(stamps)


@contextmanager
def server_write(*, server_id: int, stamps: Iterable[str] = (), lock: bool = False) -> Iterator[ServerWrite]:
    """One transaction for a write of `server_id` that bumps `stamps` (and any the body touches)
    before it commits; `lock` takes the server's row first."""
    with transaction.atomic():
        if lock:
            lock_server(server_id)
        write = ServerWrite(server_id, set(stamps))
        yield write
        for stamp in sorted(write.stamps):  # one order for every writer: no deadlock between two
            bump(stamp, server_id)
