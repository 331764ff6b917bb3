"""Short-term memory for the pure contributor: a clock, the ids of two servers and two users, and an
entry builder."""

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
