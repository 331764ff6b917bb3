"""Agents that talk to each other (docs/groups.md): the group tools in each provider's shape, the
notes API that carries out set_member_note, and the read endpoints the bot uses to learn a group."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from core.actors import SYSTEM
from groups import selectors, services
from servers.models import AuditEvent

pytestmark = pytest.mark.django_db

GROUP_TOOLS = [
    "list_group_members",
    "trigger_group_member",
    "set_member_note",
    "set_author_note",
    "add_agent_context",
    "recall",
    "roll_dice",
]


@pytest.fixture
def stored_party(lantern, party_cards, committed):
    with committed(execute=True):
        return services.group_save(
            server=lantern, name="Party", members=["Mira", "Tomas", "Old Tom"], by=SYSTEM
        )


def api(client, method, name, args, token, body=None):
    url = reverse(f"groups:{name}", args=args)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    if method == "get":
        return client.get(url, **headers)
    return client.post(url, data=json.dumps(body), content_type="application/json", **headers)


def assemble(client, token, **extra):
    body = {
        "names": {"user": "Ann", "char": "Tomas"},
        "history": [{"role": "user", "name": "Ann", "content": "hi"}],
        "group": {"name": "Party", "speaker": "Tomas"},
        **extra,
    }
    return client.post(
        reverse("assembly:api-assemble", args=[1001]),
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    ).json()


def test_group_tools_are_declared_in_the_openai_shape(client, stored_party, api_token):
    tools = assemble(client, api_token, group_tools=True, provider="openai")["provider_payload"]["tools"]
    assert [t["type"] for t in tools] == ["function"] * len(GROUP_TOOLS)
    assert [t["function"]["name"] for t in tools] == GROUP_TOOLS
    trigger = tools[1]["function"]["parameters"]
    assert trigger["required"] == ["id", "message"] and trigger["properties"]["id"]["type"] == "integer"
    assert tools[2]["function"]["parameters"]["properties"]["text"]["maxLength"] == 1500


def test_group_tools_are_declared_in_the_anthropic_shape(client, stored_party, api_token):
    tools = assemble(client, api_token, group_tools=True, provider="anthropic")["provider_payload"]["tools"]
    assert [t["name"] for t in tools] == GROUP_TOOLS
    assert tools[0]["input_schema"] == {"type": "object", "properties": {}}
    assert tools[2]["input_schema"]["required"] == ["id", "text"]


def test_group_tools_are_declared_in_the_gemini_shape_beside_the_memory_tool(client, stored_party, api_token):
    payload = assemble(
        client,
        api_token,
        group_tools=True,
        provider="gemini",
        stm_context={"channel": "77", "user": "5", "has_tools": True},
    )["provider_payload"]
    assert len(payload["tools"]) == 1
    declarations = payload["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declarations] == ["update_short_term_memory", *GROUP_TOOLS]
    assert "parameters" not in declarations[1]  # Gemini refuses an empty object schema


def test_without_group_tools_or_without_a_group_no_group_tool_is_declared(client, stored_party, api_token):
    assert "tools" not in assemble(client, api_token, provider="openai")["provider_payload"]
    answer = assemble(client, api_token, provider="openai", group_tools=True, group=None)
    assert "tools" not in answer["provider_payload"]
    assert any("only for a group turn" in warning for warning in answer["warnings"])


def test_set_member_note_is_stored_per_channel_and_member_and_audited(
    client, lantern, stored_party, api_token, committed
):
    answer = api(
        client,
        "post",
        "api-notes",
        [1001, "Party"],
        api_token,
        {"channel": "77", "member": "Tomas", "text": "Hides the key."},
    )
    assert answer.status_code == 200
    assert answer.json()["member"]["name"] == "Tomas" and answer.json()["channel"] == "77"
    tomas = answer.json()["member"]["id"]
    assert selectors.member_note(lantern.pk, 77, tomas) == "Hides the key."
    assert selectors.member_note(lantern.pk, 78, tomas) is None
    assert AuditEvent.objects.get(action="group.note").detail["member"] == "Tomas"
    with committed(execute=True):
        cleared = api(
            client,
            "post",
            "api-notes",
            [1001, "Party"],
            api_token,
            {"channel": 77, "member": tomas, "text": ""},
        )
    assert cleared.status_code == 200 and selectors.member_note(lantern.pk, 77, tomas) is None


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ({"channel": "77", "member": "Tomas", "text": "x" * 1501}, "at most 1500 characters"),
        ({"channel": "77", "member": "Gull", "text": "hi"}, "“Gull” is not a member"),
        ({"channel": "seventy", "member": "Tomas", "text": "hi"}, "`channel` must be a Discord id"),
        ({"channel": "77", "member": "Tomas", "text": 5}, "`text` must be text"),
    ],
)
def test_a_bad_note_is_refused_in_one_sentence_and_nothing_is_kept(
    client, stored_party, api_token, body, sentence
):
    answer = api(client, "post", "api-notes", [1001, "Party"], api_token, body)
    assert answer.status_code == 400 and sentence in answer.json()["error"]
    assert not AuditEvent.objects.filter(action="group.note").exists()


def test_charlie_cannot_write_a_note_into_the_lantern_guilds_group(
    client, stored_party, harbor, harbor_token
):
    body = {"channel": "77", "member": "Tomas", "text": "hi"}
    assert api(client, "post", "api-notes", [1001, "Party"], harbor_token, body).status_code == 404
    assert api(client, "post", "api-notes", [harbor.pk, "Party"], harbor_token, body).status_code == 404


def test_the_bot_reads_the_groups_a_group_and_a_channels_group(
    client, lantern, stored_party, api_token, committed
):
    with committed(execute=True):
        services.channel_group_set(server=lantern, channel_id=77, group=stored_party, by=SYSTEM)
    listed = api(client, "get", "api-list", [1001], api_token).json()["groups"]
    assert [g["name"] for g in listed] == ["Party"] and listed[0]["channels"] == ["77"]
    shown = api(client, "get", "api-detail", [1001, "Party"], api_token).json()
    assert [(m["name"], m["muted"]) for m in shown["members"]] == [
        ("Mira", False),
        ("Tomas", False),
        ("Old Tom", False),
    ]
    assert all(isinstance(m["id"], int) for m in shown["members"])
    channel = api(client, "get", "api-channel", [1001, 77], api_token).json()
    assert channel["channel"] == "77" and channel["group"]["name"] == "Party"
    thread = client.get(
        reverse("groups:api-channel", args=[1001, 90]) + "?parent=77",
        HTTP_AUTHORIZATION=f"Bearer {api_token}",
    )
    assert thread.json()["group"]["name"] == "Party"
    assert api(client, "get", "api-channel", [1001, 78], api_token).json()["group"] is None
    assert api(client, "get", "api-detail", [1001, "Crew"], api_token).status_code == 404
