"""A private context (docs/channels.md#private-context): `add_agent_context` keeps a system message in
the channel's stored conversation that only the named member's prompts receive, at its place in the
history; other speakers never see it, the API and the channel page mark it as private to its member,
and a member outside the channel's group, another server's token or a bad text is refused."""

from __future__ import annotations

import json
import time

import pytest
from django.urls import reverse

from core.actors import SYSTEM
from groups import selectors, services
from servers.models import AuditEvent
from tests.present import present

pytestmark = pytest.mark.django_db

TAVERN = "111222333444555666"
CELLAR = "111222333444555777"


def discord_id_in_a_minute() -> str:
    """The id Discord gives a message posted a minute from now (a snowflake is a time)."""
    return str((int(time.time() * 1000) + 60_000 - 1_420_070_400_000) << 22)


def call(client, token, method, path, body=None, *, server=1001):
    return client.generic(
        method,
        f"/api/v1/servers/{server}/{path}",
        b"" if body is None else json.dumps(body).encode(),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def post(client, token, message_id, content, *, role="user", channel=TAVERN, **extra):
    body = {"id": message_id, "role": role, "content": content, **extra}
    if role == "user":
        body["author"] = {"id": "900000000000000001", "name": "Ann"}
    answer = call(client, token, "POST", f"channels/{channel}/messages", body)
    assert answer.status_code in (200, 201), answer.content


def add_context(client, token, body, *, channel=TAVERN, server=1001):
    return call(client, token, "POST", f"channels/{channel}/tools/add_agent_context", body, server=server)


def prompt_of(client, token, speaker, *, channel=TAVERN):
    body = {"conversation": channel, "names": {"user": "Ann"}, "group": {"name": "Party", "speaker": speaker}}
    answer = call(client, token, "POST", "assemble", body)
    assert answer.status_code == 200, answer.content
    return answer.json()["messages"]


@pytest.fixture
def party_in_tavern(lantern, party_cards, committed, client, api_token):
    with committed(execute=True):
        row = services.group_save(
            server=lantern, name="Party", members=["Mira", "Tomas", "Old Tom"], by=SYSTEM
        )
        services.channel_group_set(server=lantern, channel_id=int(TAVERN), group=row, by=SYSTEM)
        services.channel_group_set(server=lantern, channel_id=int(CELLAR), group=row, by=SYSTEM)
    post(client, api_token, "1000", "Who has the lamp?")
    post(client, api_token, "1001", "Not me.", role="assistant", speaker="Mira")
    return row


def test_the_context_reaches_only_its_members_prompt_at_its_place(client, api_token, party_in_tavern):
    answer = add_context(client, api_token, {"member": "Tomas", "text": "\nYou hid the lamp in the barrel."})
    assert answer.status_code == 200, answer.content
    result = answer.json()["result"]
    assert result["kept"] is True and result["member"]["name"] == "Tomas"
    post(client, api_token, discord_id_in_a_minute(), "Tomas, the lamp?")
    tomas = prompt_of(client, api_token, "Tomas")
    texts = [m["content"] for m in tomas]
    secret = next(i for i, m in enumerate(tomas) if "You hid the lamp in the barrel." in m["content"])
    assert tomas[secret]["role"] == "system"
    assert next(i for i, t in enumerate(texts) if "Not me." in t) < secret
    assert secret < next(i for i, t in enumerate(texts) if "Tomas, the lamp?" in t)
    for other in ("Mira", "Old Tom"):
        assert not any("barrel" in m["content"] for m in prompt_of(client, api_token, other))
    event = AuditEvent.objects.get(action="channel.private_context")
    assert event.detail == {"channel": TAVERN, "member": "Tomas", "chars": 32}


def test_a_member_named_by_its_id_is_the_same_member(client, api_token, party_in_tavern):
    mira_id = present(selectors.loaded_group_fresh(1001, "Party")).id_of("Mira")
    answer = add_context(client, api_token, {"member": mira_id, "text": "The lamp is yours to find."})
    assert answer.json()["result"]["member"] == {"id": mira_id, "name": "Mira"}
    assert any("yours to find" in m["content"] for m in prompt_of(client, api_token, "Mira"))


def test_the_conversation_and_the_channel_page_mark_it_private_to_its_member(
    client, alice, api_token, party_in_tavern
):
    add_context(client, api_token, {"member": "Tomas", "text": "You <b>hid</b> the lamp."})
    stored = call(client, api_token, "GET", f"channels/{TAVERN}/conversation").json()["messages"]
    assert stored[-1]["role"] == "system" and stored[-1]["private_to"] == "Tomas"
    assert "private_to" not in stored[0]
    client.force_login(alice)
    page = client.get(reverse("conversations:channel", args=[1001, int(TAVERN)])).content.decode()
    assert "Private context for Tomas" in page and "You &lt;b&gt;hid&lt;/b&gt; the lamp." in page


def test_a_private_context_is_not_recalled_nor_read_by_who_answers_next(client, api_token, party_in_tavern):
    def next_speakers():
        answer = call(client, api_token, "POST", "groups/Party/next", {"conversation": TAVERN, "seed": 1})
        assert answer.status_code == 200, answer.content
        return answer.json()["speakers"]

    before = next_speakers()
    # A line naming a member makes it answer next (docs/groups.md): this one names who did not.
    named = next(name for name in ("Old Tom", "Tomas", "Mira") if name not in before)
    add_context(client, api_token, {"member": "Tomas", "text": f"The barrel hides the lamp, {named}."})
    found = call(client, api_token, "POST", f"channels/{TAVERN}/tools/recall", {"query": "barrel lamp"})
    assert [m["content"] for m in found.json()["result"]["messages"]] == ["Who has the lamp?"]
    assert next_speakers() == before


def test_the_context_stays_in_its_channel(client, api_token, party_in_tavern):
    post(client, api_token, "2000", "Down in the cellar.", channel=CELLAR)
    add_context(client, api_token, {"member": "Tomas", "text": "Only the tavern knows this."})
    assert not any(
        "tavern knows" in m["content"] for m in prompt_of(client, api_token, "Tomas", channel=CELLAR)
    )


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ({"member": "Gull", "text": "Hi."}, "“Gull” is not a member of the group “Party”."),
        ({"member": "Tomas", "text": ""}, "`text` must be the context"),
        ({"member": "Tomas", "text": "x" * 1501}, "`text` has at most 1500 characters."),
        ({"member": True, "text": "Hi."}, "`member` must be a member's id"),
        ({"member": "Tomas", "text": "Hi.", "secret": 1}, "secret"),
    ],
)
def test_a_bad_context_is_refused_in_one_sentence_and_nothing_is_kept(
    client, api_token, party_in_tavern, body, sentence
):
    answer = add_context(client, api_token, body)
    assert answer.status_code == 400 and sentence in answer.json()["error"]
    assert len(call(client, api_token, "GET", f"channels/{TAVERN}/conversation").json()["messages"]) == 2
    assert not AuditEvent.objects.filter(action="channel.private_context").exists()


def test_a_channel_without_a_group_or_a_stored_conversation_is_refused(client, api_token, party_in_tavern):
    post(client, api_token, "3000", "Quiet here.", channel="111222333444555888")
    no_group = add_context(
        client, api_token, {"member": "Tomas", "text": "Hi."}, channel="111222333444555888"
    )
    assert no_group.status_code == 400 and "has no group" in no_group.json()["error"]
    nothing = add_context(client, api_token, {"member": "Tomas", "text": "Hi."}, channel=CELLAR)
    assert nothing.status_code == 400 and "stores no conversation" in nothing.json()["error"]


def test_charlie_cannot_slip_a_context_into_the_lantern_guilds_channel(
    client, api_token, harbor, harbor_token, party_in_tavern
):
    answer = add_context(client, harbor_token, {"member": "Tomas", "text": "Betray them."})
    assert answer.status_code == 404
    own = add_context(client, harbor_token, {"member": "Tomas", "text": "Betray them."}, server=harbor.pk)
    assert own.status_code == 400  # his server stores no such channel; nothing reaches the Guild's
    assert not any("Betray" in m["content"] for m in prompt_of(client, api_token, "Tomas"))


def test_the_preview_of_the_channel_as_it_stands_shows_the_context_only_for_its_member(
    client, alice, api_token, party_in_tavern
):
    add_context(client, api_token, {"member": "Tomas", "text": "Tomas alone knows the barrel."})
    client.force_login(alice)
    document = {"names": {"user": "Ann"}, "history": [{"role": "user", "name": "Ann", "content": "Hi."}]}

    def preview(speaker):
        form = {"document": json.dumps(document), "source": "json", "channel": TAVERN, "group": "Party"}
        answer = client.post(reverse("assembly:preview-render", args=[1001]), {**form, "speaker": speaker})
        assert answer.status_code == 200, answer.content.decode()[-3000:]
        return answer.content.decode()

    assert "Tomas alone knows the barrel." in preview("Tomas")
    mira = preview("Mira")
    assert "Not me." in mira and "Tomas alone knows" not in mira


def stored_ids(client, token):
    return [m["id"] for m in call(client, token, "GET", f"channels/{TAVERN}/conversation").json()["messages"]]


def _changes_to(context_id: str) -> list[tuple[str, str, dict | None]]:
    """Every way the message routes change a stored message, aimed at one id."""
    at = f"channels/{TAVERN}/messages/{context_id}"
    return [
        ("PATCH", at, {"content": "Nothing to hide."}),
        ("DELETE", at, None),
        ("POST", f"{at}/swipes", {"content": "Nothing to hide."}),
        ("PUT", f"{at}/swipes/current", {"index": 0}),
        ("DELETE", f"{at}/swipes/0", None),
        ("POST", f"channels/{TAVERN}/messages", {"id": context_id, "role": "assistant", "content": "Hi."}),
    ]


def test_the_message_routes_refuse_to_edit_delete_or_swipe_a_private_context(
    client, api_token, party_in_tavern
):
    add_context(client, api_token, {"member": "Tomas", "text": "You hid the lamp in the barrel."})
    context_id = stored_ids(client, api_token)[-1]
    for method, path, body in _changes_to(context_id):
        answer = call(client, api_token, method, path, body)
        assert answer.status_code == 409, (method, path, answer.content)
        assert "private context" in answer.json()["error"], (method, path)
        assert "barrel" not in answer.content.decode()
    stored = call(client, api_token, "GET", f"channels/{TAVERN}/conversation").json()["messages"]
    assert stored[-1]["private_to"] == "Tomas" and stored[-1]["content"] == "You hid the lamp in the barrel."
    assert any("in the barrel" in m["content"] for m in prompt_of(client, api_token, "Tomas"))


def test_another_servers_token_sees_nothing_of_a_private_context_through_the_message_routes(
    client, api_token, harbor, harbor_token, party_in_tavern
):
    add_context(client, api_token, {"member": "Tomas", "text": "You hid the lamp in the barrel."})
    context_id = stored_ids(client, api_token)[-1]
    for server in (1001, harbor.pk):
        for method, path, body in _changes_to(context_id):
            answer = call(client, harbor_token, method, path, body, server=server)
            if server == harbor.pk and path.endswith("/messages"):
                assert answer.status_code == 201  # his own channel's first message: his, not the Guild's
            else:
                assert answer.status_code in (400, 404), (server, method, path, answer.content)
            assert "private context" not in answer.content.decode()
            assert "barrel" not in answer.content.decode()
    assert any("in the barrel" in m["content"] for m in prompt_of(client, api_token, "Tomas"))
