"""Discord ids on every bot endpoint: a JSON string or number, up to 64 bits, answered as strings.

discord.js hands ids out as strings because they pass 2^53; a JavaScript bot cannot send them as
numbers without losing digits, so both spellings must work and a malformed one gets a 400 naming
the field.
"""

from __future__ import annotations

import json

import pytest

from memory.models import StmConsent, StmEntry
from servers.models import Channel
from tests.present import present

BIG_CHANNEL = "1234567890123456789"  # past 2^53: a JavaScript number would round it
BIG_THREAD = "1234567890123456790"
BIG_USER = "987654321098765432"


def post(client, path, body, token):
    return client.post(
        f"/api/v1/servers/1001/{path}",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def spelled(value: str, as_number: bool) -> int | str:
    return int(value) if as_number else value


@pytest.mark.parametrize("as_number", [False, True], ids=["string", "number"])
def test_the_bot_stores_a_turn_with_ids_in_either_spelling_and_gets_strings_back(
    client, api_token, as_number
):
    body = {
        "channel": spelled(BIG_THREAD, as_number),
        "parent_channel": spelled(BIG_CHANNEL, as_number),
        "user": spelled(BIG_USER, as_number),
        "messages": [{"role": "user", "name": "Mira", "content": "Any ale?"}],
    }
    entry = post(client, "stm/turns", body, api_token).json()["entry"]
    assert (entry["server"], entry["channel"], entry["user"]) == ("1001", BIG_THREAD, BIG_USER)
    assert present(Channel.objects.get(discord_id=int(BIG_THREAD)).parent).discord_id == int(BIG_CHANNEL)


@pytest.mark.parametrize("as_number", [False, True], ids=["string", "number"])
def test_the_memory_tool_accepts_ids_in_either_spelling(client, api_token, as_number):
    body = {
        "channel": spelled(BIG_CHANNEL, as_number),
        "user": spelled(BIG_USER, as_number),
        "summary": "Ale.",
    }
    entry = post(client, "stm/summary", body, api_token).json()["entry"]
    assert (entry["channel"], entry["user"], entry["summary"]) == (BIG_CHANNEL, BIG_USER, "Ale.")
    assert StmEntry.objects.get().channel.discord_id == int(BIG_CHANNEL)


def test_the_entry_list_filters_by_a_channel_id_of_64_bits_and_answers_strings(client, api_token):
    post(client, "stm/turns", {"channel": BIG_CHANNEL, "user": BIG_USER, "messages": []}, api_token)
    post(client, "stm/turns", {"channel": 600, "user": BIG_USER, "messages": []}, api_token)
    response = client.get(
        f"/api/v1/servers/1001/stm/entries?channel={BIG_CHANNEL}", HTTP_AUTHORIZATION=f"Bearer {api_token}"
    )
    assert [e["channel"] for e in response.json()["entries"]] == [BIG_CHANNEL]


def test_a_users_opt_in_takes_a_64_bit_id_and_answers_it_as_a_string(client, api_token):
    response = post(client, f"stm/users/{BIG_USER}/opt-in", {"opt_in": True}, api_token)
    assert response.json() == {"user": BIG_USER, "server": "1001", "cross_server_opt_in": True}
    assert StmConsent.objects.filter(user_id=int(BIG_USER), server_id=1001).exists()


@pytest.mark.parametrize("as_number", [False, True], ids=["string", "number"])
def test_assemble_takes_channel_ids_in_either_spelling(client, api_token, as_number):
    body = {
        "history": [{"role": "user", "name": "Mira", "content": "hi"}],
        "channel": spelled(BIG_THREAD, as_number),
        "parent_channel": spelled(BIG_CHANNEL, as_number),
        "stm_context": {"channel": spelled(BIG_THREAD, as_number), "user": spelled(BIG_USER, as_number)},
    }
    response = post(client, "assemble", body, api_token)
    assert response.status_code == 200, response.content
    assert response.json()["messages"][-1]["content"].endswith("hi")


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("assemble", {"channel": "12ab"}, "`channel`"),
        ("assemble", {"parent_channel": -5}, "`parent_channel`"),
        ("assemble", {"stm_context": {"channel": "1.5", "user": 1}}, "`stm_context.channel`"),
        ("assemble", {"stm_context": {"channel": 1, "user": True}}, "`stm_context.user`"),
        ("assemble", {"stm_context": {"channel": 1, "user": 1, "parent_channel": "x"}}, "parent_channel"),
        ("stm/turns", {"channel": "99999999999999999999", "user": 1}, "`channel`"),
        ("stm/turns", {"channel": 1, "user": 1.5}, "`user`"),
        ("stm/turns", {"channel": 1, "user": 1, "parent_channel": " 7"}, "`parent_channel`"),
        ("stm/summary", {"channel": 1, "user": "-1", "summary": "s"}, "`user`"),
        ("stm/summary", {"channel": "0", "user": 1, "summary": "s"}, "`channel`"),
    ],
)
def test_a_malformed_id_gets_a_400_naming_the_field(client, api_token, path, body, field):
    response = post(client, path, body, api_token)
    assert response.status_code == 400
    assert field in response.json()["error"]


def test_a_malformed_channel_filter_gets_a_400_naming_it(client, api_token):
    response = client.get(
        "/api/v1/servers/1001/stm/entries?channel=abc", HTTP_AUTHORIZATION=f"Bearer {api_token}"
    )
    assert response.status_code == 400
    assert "`channel`" in response.json()["error"]
