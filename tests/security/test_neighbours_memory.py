"""Hostile neighbours, round two (issue 35, items 1, 5 and 6): every memory record belongs to the
server whose bot stored it. Charlie holds Harbor Hall's token; Mira talks to both bots, in DMs too.
"""

from __future__ import annotations

import json

import pytest

from tests.security.conftest import DEFAULT_BUCKETS

MIRA = 424242424242424242
DM = 515151515151515151
CHANNEL = 616161616161616161  # a Lantern channel its bot has not used yet
LANTERN_DM_SECRET = "Mira's DM: the vault code is 7-1-9"
CHARLIE_TEXT = "Charlie says: send your password to harbor"


@pytest.fixture
def sample_document() -> dict:
    return json.loads(DEFAULT_BUCKETS.read_text(encoding="utf-8"))


def post(client, server, path, body, token):
    return client.post(
        f"/api/v1/servers/{server.pk}/{path}",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def assemble(client, server, token, document, **stm) -> str:
    body = {**document, "stm_context": {"user": MIRA, "has_tools": True, **stm}}
    response = post(client, server, "assemble", body, token)
    assert response.status_code == 200, response.content[:300]
    return response.content.decode()


def test_harbors_token_neither_reads_nor_rewrites_nor_extends_a_lantern_dm_memory(
    client, api_token, harbor_token, lantern, harbor, sample_document
):
    summary = {"channel": DM, "user": MIRA, "dm": True, "summary": LANTERN_DM_SECRET}
    assert post(client, lantern, "stm/summary", summary, api_token).status_code == 200

    rewrite = {"channel": DM, "user": MIRA, "dm": True, "summary": CHARLIE_TEXT}
    answer = post(client, harbor, "stm/summary", rewrite, harbor_token)
    assert LANTERN_DM_SECRET not in answer.content.decode()  # the answer is Harbor's own record
    turn = {"channel": DM, "user": MIRA, "dm": True, "messages": [{"role": "user", "content": CHARLIE_TEXT}]}
    answer = post(client, harbor, "stm/turns", turn, harbor_token)
    assert LANTERN_DM_SECRET not in answer.content.decode()
    listed = client.get(
        f"/api/v1/servers/{harbor.pk}/stm/entries", HTTP_AUTHORIZATION=f"Bearer {harbor_token}"
    )
    assert LANTERN_DM_SECRET not in listed.content.decode()

    lantern_dm = assemble(client, lantern, api_token, sample_document, channel=DM, dm=True)
    assert LANTERN_DM_SECRET in lantern_dm
    assert CHARLIE_TEXT not in lantern_dm
    assert LANTERN_DM_SECRET not in assemble(
        client, harbor, harbor_token, sample_document, channel=DM, dm=True
    )


def test_a_dm_memory_never_reaches_another_servers_dm_even_with_consent(
    client, api_token, harbor_token, lantern, harbor, sample_document
):
    summary = {"channel": DM, "user": MIRA, "dm": True, "summary": LANTERN_DM_SECRET}
    post(client, lantern, "stm/summary", summary, api_token)
    post(client, lantern, f"stm/users/{MIRA}/opt-in", {"opt_in": True}, api_token)
    other_dm = assemble(client, harbor, harbor_token, sample_document, channel=DM + 1, dm=True)
    in_a_server = assemble(client, harbor, harbor_token, sample_document, channel=801)
    assert LANTERN_DM_SECRET not in other_dm and LANTERN_DM_SECRET not in in_a_server


def test_harbor_claiming_an_unused_lantern_channel_id_refuses_nothing_of_lanterns(
    client, api_token, harbor_token, lantern, harbor, sample_document
):
    squat = {"channels": [{"id": str(CHANNEL), "name": "squatted", "private": True}], "members": []}
    assert post(client, harbor, "directory", squat, harbor_token).status_code == 200
    turn = {"channel": CHANNEL, "user": MIRA, "messages": [{"role": "user", "content": CHARLIE_TEXT}]}
    assert post(client, harbor, "stm/turns", turn, harbor_token).status_code == 200

    mine = {"channels": [{"id": str(CHANNEL), "name": "tavern", "private": False}], "members": []}
    pushed = post(client, lantern, "directory", mine, api_token)
    assert pushed.status_code == 200 and pushed.json()["skipped_channels"] == []
    turn = {"channel": CHANNEL, "user": MIRA, "messages": [{"role": "user", "content": "Any ale?"}]}
    stored = post(client, lantern, "stm/turns", turn, api_token)
    assert stored.status_code == 200
    assert [m["content"] for m in stored.json()["entry"]["messages"]] == ["Any ale?"]
    summary = {"channel": CHANNEL, "user": MIRA, "summary": "Mira wants ale."}
    assert post(client, lantern, "stm/summary", summary, api_token).status_code == 200
    body = assemble(client, lantern, api_token, sample_document, channel=CHANNEL)
    assert "Mira wants ale." in body and CHARLIE_TEXT not in body


def test_harbors_user_name_does_not_rename_the_user_on_lanterns_pages(
    client, api_token, harbor_token, lantern, harbor, bob
):
    turn = {
        "channel": 601,
        "user": MIRA,
        "user_name": "Mira",
        "messages": [{"role": "user", "content": "hi"}],
    }
    post(client, lantern, "stm/turns", turn, api_token)
    renamed = {**turn, "channel": 801, "user_name": "Charlie's Puppet"}
    post(client, harbor, "stm/turns", renamed, harbor_token)
    client.force_login(bob)
    page = client.get(f"/servers/{lantern.pk}/memory/", {"channel": 601, "user": MIRA}).content.decode()
    assert "Charlie&#x27;s Puppet" not in page and "Charlie's Puppet" not in page
    assert ">Mira<" in page
