"""Short-term memory fixtures: a clock and stored entries (the ids are the engine tests')."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.engine.stm.conftest import HARBOR, LANTERN, MIRA, NOW, TOMAS  # noqa: F401 (the tests' ids)


@pytest.fixture
def now() -> datetime:
    return NOW


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
