"""A shared workspace (docs/groups.md#a-shared-workspace): the channel tool route carries
out set_author_note (the channel's Author's Note, placed as the document's note settings say) and
roll_dice (SillyTavern's dice notation, rolled by the server with the seeded source); each call is
bounded, audited and kept to its channel and server."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from core.actors import SYSTEM
from servers.models import AuditEvent

pytestmark = pytest.mark.django_db


def tool(client, token, name, body, *, server=1001, channel=77):
    url = reverse("servers:api-channel-tool", args=[server, channel, name])
    return client.post(
        url, data=json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def assembled(client, token, *, channel="77", **extra):
    body = {
        "names": {"user": "Ann", "char": "Lantern"},
        "history": [
            {"role": "user", "name": "Ann", "content": "We reach the cellar door."},
            {"role": "assistant", "name": "Lantern", "content": "It is locked."},
            {"role": "user", "name": "Ann", "content": "I knock."},
        ],
        "channel": channel,
        **extra,
    }
    answer = client.post(
        reverse("assembly:api-assemble", args=[1001]),
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert answer.status_code == 200, answer.content
    return [m["content"] for m in answer.json()["messages"]]


def test_set_author_note_reaches_every_prompt_of_that_channel_and_no_other(
    client, lantern, api_token, committed
):
    with committed(execute=True):
        answer = tool(client, api_token, "set_author_note", {"text": "\nThe storm is getting worse."})
    assert answer.status_code == 200
    assert answer.json() == {"result": {"authors_note": "\nThe storm is getting worse.", "channel": "77"}}
    assert any("The storm is getting worse." in text for text in assembled(client, api_token))
    assert not any("storm" in text for text in assembled(client, api_token, channel="78"))
    event = AuditEvent.objects.get(action="group.authors_note")
    assert event.detail == {"channel": "77", "chars": 28} and event.actor_label.startswith("api token")


def test_the_note_is_placed_as_the_documents_note_settings_say(client, lantern, api_token, committed):
    with committed(execute=True):
        tool(client, api_token, "set_author_note", {"text": "Keep it short."})
    at_depth_0 = "\n".join(assembled(client, api_token, authors_note={"depth": 0, "position": "in_chat"}))
    assert at_depth_0.index("I knock.") < at_depth_0.index("Keep it short.")
    at_depth_2 = "\n".join(assembled(client, api_token, authors_note={"depth": 2, "position": "in_chat"}))
    assert (
        at_depth_2.index("cellar door")
        < at_depth_2.index("Keep it short.")
        < at_depth_2.index("It is locked.")
    )


def test_a_note_the_document_writes_itself_wins_over_the_stored_one(client, lantern, api_token, committed):
    with committed(execute=True):
        tool(client, api_token, "set_author_note", {"text": "Stored note."})
    sent = "\n".join(assembled(client, api_token, authors_note={"text": "The bot's own note.", "depth": 0}))
    assert "The bot's own note." in sent and "Stored note." not in sent


def test_an_empty_text_removes_the_note(client, lantern, api_token, committed):
    with committed(execute=True):
        tool(client, api_token, "set_author_note", {"text": "Rain."})
        cleared = tool(client, api_token, "set_author_note", {"text": ""})
    assert cleared.json()["result"]["authors_note"] == ""
    assert not any("Rain." in text for text in assembled(client, api_token))
    assert AuditEvent.objects.filter(action="group.authors_note.clear").count() == 1


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ({"text": "x" * 1501}, "at most 1500 characters"),
        ({"text": 5}, "`text` must be text"),
        ({}, "`text` must be text"),
        ({"text": "hi", "txt": "hi"}, "Unknown field `txt` in the arguments of set_author_note"),
    ],
)
def test_a_bad_author_note_is_refused_and_nothing_is_kept(client, lantern, api_token, body, sentence):
    answer = tool(client, api_token, "set_author_note", body)
    assert answer.status_code == 400 and sentence in answer.json()["error"]
    assert not AuditEvent.objects.filter(action__startswith="group.authors_note").exists()


def test_charlie_cannot_write_the_lantern_guilds_note_and_his_own_channel_77_is_his(
    client, lantern, harbor, api_token, harbor_token, committed
):
    assert tool(client, harbor_token, "set_author_note", {"text": "Sabotage."}).status_code == 404
    with committed(execute=True):
        mine = tool(client, harbor_token, "set_author_note", {"text": "Harbor fog."}, server=harbor.pk)
    assert mine.status_code == 200
    assert not any("fog" in text or "Sabotage" in text for text in assembled(client, api_token))


def test_roll_dice_rolls_the_dice_asked_with_the_seed_it_answers(client, lantern, api_token):
    first = tool(client, api_token, "roll_dice", {"formula": "3d6+2"}).json()["result"]
    assert first["formula"] == "3d6+2" and len(first["rolls"]) == 3
    assert all(1 <= die <= 6 for die in first["rolls"])
    assert first["total"] == sum(first["rolls"]) + 2 and first["modifier"] == 2
    again = tool(client, api_token, "roll_dice", {"formula": "3d6+2", "seed": first["seed"]}).json()["result"]
    assert again == first
    event = AuditEvent.objects.filter(action="group.dice").first()
    assert event is not None
    assert event.detail["formula"] == "3d6+2" and event.detail["total"] == first["total"]


def test_many_seeds_give_every_face_and_nothing_outside(client, lantern, api_token):
    faces = {
        tool(client, api_token, "roll_dice", {"formula": "d4", "seed": seed}).json()["result"]["total"]
        for seed in range(40)
    }
    assert faces == {1, 2, 3, 4}


@pytest.mark.parametrize(
    ("formula", "shown", "dice"), [("20", "1d20", 1), ("d8", "1d8", 1), ("2d10-1", "2d10-1", 2)]
)
def test_sillytaverns_dice_notation_is_read(client, lantern, api_token, formula, shown, dice):
    result = tool(client, api_token, "roll_dice", {"formula": formula}).json()["result"]
    assert result["formula"] == shown and len(result["rolls"]) == dice


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ({"formula": "two dice"}, "is not dice notation"),
        ({"formula": "500d6"}, "at most 100 dice of at most 1000 sides"),
        ({"formula": "1d5000"}, "at most 100 dice of at most 1000 sides"),
        ({"formula": "1d6" + " " * 200}, "at most 100 characters"),
        ({"formula": "1d6", "seed": -1}, "`seed` must be a whole number"),
        ({"dice": "1d6"}, "Unknown field `dice`"),
    ],
)
def test_a_bad_roll_is_refused_and_not_audited(client, lantern, api_token, body, sentence):
    answer = tool(client, api_token, "roll_dice", body)
    assert answer.status_code == 400 and sentence in answer.json()["error"]
    assert not AuditEvent.objects.filter(action="group.dice").exists()


def test_an_unknown_tool_is_a_404_listing_the_tools_and_a_get_a_405(client, lantern, api_token):
    unknown = tool(client, api_token, "summon_dragon", {})
    assert unknown.status_code == 404 and "roll_dice" in unknown.json()["error"]
    url = reverse("servers:api-channel-tool", args=[1001, 77, "roll_dice"])
    assert client.get(url, HTTP_AUTHORIZATION=f"Bearer {api_token}").status_code == 405


def test_a_tool_call_without_a_token_is_refused(client, lantern):
    url = reverse("servers:api-channel-tool", args=[1001, 77, "roll_dice"])
    answer = client.post(url, data="{}", content_type="application/json")
    assert answer.status_code == 401


def test_the_preview_shows_the_channels_authors_note_and_the_tools_offered(
    client, alice, lantern, party_cards, api_token, committed
):
    from groups import services

    with committed(execute=True):
        services.group_save(server=lantern, name="Party", members=["Mira", "Tomas"], by=SYSTEM)
        tool(client, api_token, "set_author_note", {"text": "The lamp is out."})
    document = {
        "names": {"user": "Ann", "char": "Tomas"},
        "history": [{"role": "user", "name": "Ann", "content": "Who has the lamp?"}],
        "group": {"name": "Party", "speaker": "Tomas"},
        "group_tools": True,
        "stm_context": {"channel": "77", "user": "5"},
    }
    client.force_login(alice)
    answer = client.post(
        reverse("assembly:preview-render", args=[1001]),
        {"document": json.dumps(document), "source": "json", "provider": "openai"},
    )
    page = answer.content.decode()
    note = page.split('data-testid="preview-authors-note"')[1].split("</p>")[0]
    assert "The lamp is out." in note
    tools = page.split('data-testid="preview-tools"')[1].split("</p>")[0]
    assert "set_author_note" in tools and "roll_dice" in tools
