"""Short-term memory fixtures: a clock, entry builders for the pure contributor, and stored entries."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engine import EntrySnapshot, StmMessage

NOW = datetime(2026, 11, 21, 20, 0, tzinfo=UTC)
LANTERN = 1001
HARBOR = 2002
MIRA = 7001  # a Discord user of the Lantern Guild
TOMAS = 7002


@pytest.fixture
def now() -> datetime:
    return NOW


@pytest.fixture
def snapshot() -> Callable[..., EntrySnapshot]:
    """Build an entry: `snapshot(entry_id, channel, hours_ago=1, server=LANTERN, ...)`."""

    def build(
        entry_id: int, channel: int, *, hours_ago: float = 1, server: int | None = LANTERN, **kw: Any
    ) -> EntrySnapshot:
        kw.setdefault("user", MIRA)
        if "message_count" in kw:
            count = kw.pop("message_count")
            kw["messages"] = tuple(
                StmMessage(role="user", name="Mira", content=f"line {i}") for i in range(count)
            )
        return EntrySnapshot(
            entry_id=entry_id,
            server_id=server,
            channel=channel,
            updated_at=NOW - timedelta(hours=hours_ago),
            **kw,
        )

    return build


@pytest.fixture
def store(db) -> Callable[..., Any]:
    """Store an entry through the service: `store(channel, hours_ago=1, server=LANTERN, user=MIRA, ...)`.
    `server=None` stores a DM entry of `owner` (whose bot stored it; Lantern by default)."""
    from django.utils import timezone

    from memory import services
    from servers.models import Server

    def put(
        channel: int,
        *,
        hours_ago: float = 1,
        server: int | None = LANTERN,
        user: int = MIRA,
        owner: int = LANTERN,
        **kw: Any,
    ):
        if server is None:
            kw["dm"] = True
        server = owner if server is None else server
        Server.objects.get_or_create(pk=server, defaults={"name": f"Server {server}"})
        count = kw.pop("message_count", 0)
        kw.setdefault(
            "messages", [{"role": "user", "name": "Mira", "content": f"line {i}"} for i in range(count)]
        )
        return services.stm_put_entry(
            server_id=server,
            channel_id=channel,
            user_id=user,
            updated_at=timezone.now() - timedelta(hours=hours_ago),
            **kw,
        )

    return put
