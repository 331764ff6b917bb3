"""The admin of the server next door tries to read another server's memory of a user (issue 25).

Charlie runs Harbor Hall and holds its bot token. Mira talks in both servers. Discord ids are public,
so Charlie can name Mira; what he must never get is the Lantern Guild's memory of her.
"""

from __future__ import annotations

import json

import pytest

from core.actors import SYSTEM
from memory.models import StmConsent
from tests.security.conftest import DEFAULT_BUCKETS

MIRA = 424242424242424242
LANTERN_SECRET = "the vault code is 7-1-9"


@pytest.fixture
def sample_document() -> dict:
    return json.loads(DEFAULT_BUCKETS.read_text(encoding="utf-8"))


def post(client, url, body, token):
    return client.post(
        url, data=json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def remember_in_lantern(client, api_token, lantern):
    turn = {
        "channel": 601,
        "user": MIRA,
        "messages": [{"role": "user", "name": "Mira", "content": LANTERN_SECRET}],
    }
    assert post(client, f"/api/v1/servers/{lantern.pk}/stm/turns", turn, api_token).status_code == 200


def harbor_assembly(client, harbor_token, harbor, sample_document) -> str:
    document = {**sample_document, "stm_context": {"channel": 801, "user": MIRA, "has_tools": True}}
    response = post(client, f"/api/v1/servers/{harbor.pk}/assemble", document, harbor_token)
    assert response.status_code == 200
    return response.content.decode()


def opt_in(client, server, token, value=True):
    return post(client, f"/api/v1/servers/{server.pk}/stm/users/{MIRA}/opt-in", {"opt_in": value}, token)


def test_charlies_token_relaying_an_opt_in_never_shows_him_the_lanterns_memory(
    client, api_token, harbor_token, lantern, harbor, sample_document
):
    remember_in_lantern(client, api_token, lantern)
    assert opt_in(client, harbor, harbor_token).status_code == 200
    assert LANTERN_SECRET not in harbor_assembly(client, harbor_token, harbor, sample_document)
    assert list(StmConsent.objects.values_list("server_id", flat=True)) == [harbor.pk]


def test_charlie_cannot_relay_an_opt_in_in_the_lanterns_name(
    client, api_token, harbor_token, lantern, harbor
):
    remember_in_lantern(client, api_token, lantern)
    assert opt_in(client, lantern, harbor_token).status_code in (401, 404)
    assert not StmConsent.objects.exists()


def test_the_lantern_memory_reaches_harbor_only_after_the_lanterns_own_bot_relays_consent(
    client, api_token, harbor_token, lantern, harbor, sample_document
):
    from memory.services import server_set_receive_other_servers

    server_set_receive_other_servers(server=harbor, receive=True, by=SYSTEM)  # Harbor's admins let them in
    remember_in_lantern(client, api_token, lantern)
    assert LANTERN_SECRET not in harbor_assembly(client, harbor_token, harbor, sample_document)
    assert opt_in(client, lantern, api_token).status_code == 200
    body = harbor_assembly(client, harbor_token, harbor, sample_document)
    assert LANTERN_SECRET in body
    assert "a channel in another server" in body
    assert opt_in(client, lantern, api_token, value=False).json()["cross_server_opt_in"] is False
    assert LANTERN_SECRET not in harbor_assembly(client, harbor_token, harbor, sample_document)
