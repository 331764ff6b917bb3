"""POST /api/v1/servers/<id>/assemble: the bot's assemble API."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse


def post(client, server_id, body, token=None):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post(
        reverse("assembly:api-assemble", args=[server_id]),
        data=data,
        content_type="application/json",
        **headers,
    )


def test_the_bot_gets_the_messages_of_a_bucket_document(client, api_token, sample_document):
    response = post(client, 1001, sample_document, api_token)
    assert response.status_code == 200
    body = response.json()
    assert body["mode"] == "native"
    assert body["messages"][-1]["content"] == "Mira: Is it... a secret?"
    assert body["seed"] == 42 and body["tokens"]["total"] > 0


def test_the_active_preset_rearranges_the_api_answer(client, api_token, stored_preset, sample_document):
    body = post(client, 1001, sample_document, api_token).json()
    assert body["preset"] == "tiny-xss"
    sources = [source for message in body["messages"] for source in message["sources"]]
    assert {"kind": "node", "identifier": "main", "name": "Main Prompt"} in sources


def test_a_provider_field_adds_that_providers_request_body(client, api_token, sample_document):
    body = post(client, 1001, {**sample_document, "provider": "gemini"}, api_token).json()
    assert body["provider"] == "gemini"
    assert "system_instruction" in body["provider_payload"]
    assert body["messages"][0]["role"] == "system"  # the neutral shape stays


def test_pre_built_items_are_accepted_in_a_buckets_wrapper(client, api_token):
    items = {"items": [{"tag": "DIALOGUE_HISTORY", "role": "user", "text": "hi", "name": "Mira"}]}
    body = post(client, 1001, {"buckets": items, "native": True}, api_token).json()
    assert body["messages"] == [
        {"role": "user", "content": "Mira: hi", "sources": [{"kind": "native", "tag": "DIALOGUE_HISTORY"}]}
    ]


def test_the_answer_is_utf8_json_and_keeps_variables_of_any_size(client, api_token, sample_document):
    for count in (
        3,
        2**80,
    ):  # 2**80 is beyond 64 bits: the fast encoder refuses it, the answer still carries it
        variables = {"mood": "ravi 🌙", "count": count}
        response = post(client, 1001, {**sample_document, "variables": variables}, api_token)
        assert response.status_code == 200 and response["Content-Type"] == "application/json"
        assert "ravi 🌙".encode() in response.content  # written as UTF-8, not \u escapes
        assert response.json()["variables"] == variables


def test_a_warm_assemble_request_makes_no_sql_query(
    client, api_token, stored_preset, sample_document, django_assert_num_queries
):
    assert post(client, 1001, sample_document, api_token).status_code == 200
    with django_assert_num_queries(0):
        response = post(client, 1001, sample_document, api_token)
    assert response.status_code == 200
    assert response.json()["preset"] == "tiny-xss"


def test_assembling_writes_nothing(client, api_token, stored_preset, sample_document):
    from servers.models import AuditEvent

    before = AuditEvent.objects.count()
    post(client, 1001, sample_document, api_token)
    assert AuditEvent.objects.count() == before


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("{not json", "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ([1, 2], "JSON object"),
        ({"history": [{"role": "robot"}]}, "history[0].role"),
        ({"provider": "cohere"}, "provider"),
        ({"style": "sideways"}, "style"),
    ],
)
def test_a_bad_request_gets_400_with_one_sentence(client, api_token, body, needle):
    response = post(client, 1001, body, api_token)
    assert response.status_code == 400
    assert needle in response.json()["error"]


def test_an_unknown_preset_name_gets_404(client, api_token, sample_document):
    response = post(client, 1001, {**sample_document, "preset": "nope"}, api_token)
    assert response.status_code == 404


def test_a_missing_token_gets_401(client, lantern, sample_document):
    assert post(client, 1001, sample_document).status_code == 401


def test_a_token_of_another_server_gets_404(client, lantern, harbor_token, sample_document):
    assert post(client, 1001, sample_document, harbor_token).status_code == 404


def test_a_token_revoked_between_two_requests_is_refused_on_the_second(
    client, api_token, alice, sample_document, django_capture_on_commit_callbacks
):
    """The token is read in the same trip as the rest of the request's cache reads: still at once."""
    from servers.models import ApiToken
    from servers.services import api_token_revoke

    assert post(client, 1001, sample_document, api_token).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        api_token_revoke(token=ApiToken.objects.get(server_id=1001), by=alice)
    response = post(client, 1001, sample_document, api_token)
    assert response.status_code == 401 and "unknown or revoked" in response.json()["error"]


@pytest.mark.parametrize("body", ["{not json", '{"history": "x", "histroy": 1}', "[1, 2]"])
def test_a_bad_token_is_refused_for_its_token_whatever_the_body(client, lantern, api_token, body):
    for token in ("tk_made_up", None):
        response = post(client, 1001, body, token)
        assert response.status_code == 401
    assert post(client, 1001, body, api_token).status_code == 400  # the body's own refusal, once let in


def test_a_large_history_is_assembled_as_a_small_one(client, api_token, sample_document):
    """A body past what is read before the token (assembly.api.READ_BEFORE_TOKEN_BYTES) is read after it."""
    from assembly.api import READ_BEFORE_TOKEN_BYTES

    turn = {"role": "user", "name": "Mira", "content": "Is it a secret? " * 40}
    history = [turn] * (READ_BEFORE_TOKEN_BYTES // len(json.dumps(turn)) + 10)
    large = {**sample_document, "history": history, "channel": "1234567890123"}
    assert len(json.dumps(large)) > READ_BEFORE_TOKEN_BYTES
    response = post(client, 1001, large, api_token)
    assert response.status_code == 200, response.json()
    assert response.json()["messages"][-1]["content"].startswith("Mira: Is it a secret?")
    assert post(client, 1001, large, "tk_made_up").status_code == 401
