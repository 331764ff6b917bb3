"""The bot's STM API: store a turn, update a summary (the tool), list entries; token auth."""

from __future__ import annotations

import json

from memory.models import DiscordUser, StmConsent, StmEntry

from .conftest import LANTERN, MIRA

TURNS = f"/api/v1/servers/{LANTERN}/stm/turns"
SUMMARY = f"/api/v1/servers/{LANTERN}/stm/summary"
ENTRIES = f"/api/v1/servers/{LANTERN}/stm/entries"


def post(client, url, body, token):
    return client.post(
        url, data=json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def test_the_bot_stores_a_turn_and_gets_the_entry_back(client, api_token):
    body = {
        "channel": "600",
        "channel_name": "tavern-hall",
        "user": MIRA,
        "user_name": "Mira",
        "messages": [
            {"role": "user", "name": "Mira", "content": "Any ale?", "timestamp": "2026-11-21T20:00:00Z"},
            {"role": "assistant", "name": "Lantern", "content": "Plenty."},
        ],
    }
    response = post(client, TURNS, body, api_token)
    assert response.status_code == 200
    entry = response.json()["entry"]
    assert (entry["channel"], entry["user"], len(entry["messages"])) == ("600", str(MIRA), 2)
    assert StmEntry.objects.get(channel__discord_id=600).server_id == LANTERN
    assert str(StmEntry.objects.get(channel__discord_id=600).channel) == "#tavern-hall"
    assert DiscordUser.objects.get(pk=MIRA).names.get(server_id=LANTERN).name == "Mira"


def test_a_turn_with_a_bad_message_role_is_a_clear_400(client, api_token):
    response = post(
        client, TURNS, {"channel": 600, "user": MIRA, "messages": [{"role": "narrator"}]}, api_token
    )
    assert response.status_code == 400
    assert "role 'narrator'" in response.json()["error"]


def test_the_update_tool_sets_the_channels_summary(client, api_token):
    response = post(client, SUMMARY, {"channel": 600, "user": MIRA, "summary": "Mira wants ale."}, api_token)
    assert response.status_code == 200
    assert StmEntry.objects.get(channel__discord_id=600).summary == "Mira wants ale."


def test_a_summary_over_1500_characters_is_a_clear_400_and_nothing_is_stored(client, api_token):
    response = post(client, SUMMARY, {"channel": 600, "user": MIRA, "summary": "x" * 1501}, api_token)
    assert response.status_code == 400
    assert response.json() == {"error": "The summary is 1501 characters long; the limit is 1500."}
    assert not StmEntry.objects.exists()


def test_a_missing_channel_is_a_clear_400(client, api_token):
    response = post(client, SUMMARY, {"user": MIRA, "summary": "s"}, api_token)
    assert response.status_code == 400
    assert "`channel` is required" in response.json()["error"]


def test_the_bot_lists_live_entries_newest_first(client, api_token, store):
    store(600, hours_ago=3)
    store(601, hours_ago=1)
    store(602, hours_ago=13)  # expired
    response = client.get(ENTRIES, HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert [e["channel"] for e in response.json()["entries"]] == ["601", "600"]


def test_listing_does_not_show_another_servers_entries(client, api_token, store):
    store(800, server=2002)
    response = client.get(ENTRIES, HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert response.json()["entries"] == []


def test_a_dm_turn_is_stored_as_a_dm_that_belongs_to_the_bots_server(client, api_token):
    post(client, TURNS, {"channel": 900, "user": MIRA, "dm": True, "messages": []}, api_token)
    entry = StmEntry.objects.get(channel__discord_id=900)
    assert (entry.server_id, entry.owner_id) == (None, LANTERN)


def test_the_bot_records_a_users_consent_for_its_own_server(client, api_token):
    response = post(client, f"/api/v1/servers/{LANTERN}/stm/users/{MIRA}/opt-in", {"opt_in": True}, api_token)
    assert response.json() == {"user": str(MIRA), "server": str(LANTERN), "cross_server_opt_in": True}
    assert list(StmConsent.objects.filter(user_id=MIRA).values_list("server_id", flat=True)) == [LANTERN]
    response = post(
        client, f"/api/v1/servers/{LANTERN}/stm/users/{MIRA}/opt-in", {"opt_in": False}, api_token
    )
    assert response.json()["cross_server_opt_in"] is False
    assert not StmConsent.objects.filter(user_id=MIRA).exists()


def test_no_token_is_401(client, lantern):
    assert client.get(ENTRIES).status_code == 401


def test_a_harbor_token_cannot_touch_lantern_memory(client, lantern, harbor_token):
    response = post(client, TURNS, {"channel": 600, "user": MIRA, "messages": []}, harbor_token)
    assert response.status_code == 404
    assert not StmEntry.objects.exists()
