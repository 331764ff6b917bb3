"""A bot client for the channel conversation API of the Lantern Guild (tokens from tests/conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

TAVERN = "111222333444555666"  # #tavern, as Discord spells a channel id
ASKER = "900000000000000001"


@dataclass
class Bot:
    """Sends the events a Discord bot forwards, with one server's token."""

    client: Client
    token: str
    server: int

    def call(self, method: str, path: str, body: Any = None) -> Any:
        raw = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        return self.client.generic(
            method,
            f"/api/v1/servers/{self.server}/{path}",
            raw,
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {self.token}",
        )

    def post(
        self, message_id: str, content: str, *, role: str = "assistant", channel: str = TAVERN, **extra: Any
    ):
        body = {"id": message_id, "role": role, "content": content, **extra}
        if role == "user" and "author" not in extra:
            body["author"] = {"id": ASKER, "name": "Mira"}
        return self.call("POST", f"channels/{channel}/messages", body)

    def variables(self, channel: str = TAVERN) -> dict[str, Any]:
        response = self.call("GET", f"channels/{channel}/conversation")
        assert response.status_code == 200, response.content
        return response.json()["variables"]

    def conversation(self, channel: str = TAVERN) -> dict[str, Any]:
        return self.call("GET", f"channels/{channel}/conversation").json()


@pytest.fixture
def bot(api_token, lantern) -> Bot:
    return Bot(Client(), api_token, lantern.pk)


@pytest.fixture
def harbor_bot(harbor_token, harbor) -> Bot:
    return Bot(Client(), harbor_token, harbor.pk)


@pytest.fixture
def stored_ids() -> Callable[[Any], list[str]]:
    return lambda conversation: [m["id"] for m in conversation["messages"]]
