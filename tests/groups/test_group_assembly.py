"""A group turn assembled for the server: the speaker's card and book, refusals naming the group or
the speaker (API 400, command exit 2), the speaker's note as its scenario, and channels that use a
group."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.urls import reverse

from assembly.selectors import GroupRefused, assemble_for_server, group_turn
from characters import services as card_services
from core.actors import SYSTEM
from engine import parse_buckets
from groups import services
from tests.present import present

from .conftest import add_card, card_bytes

pytestmark = pytest.mark.django_db

LAMP_BOOK = {"entries": [{"keys": ["lamp"], "content": "Tomas lit the lamp.", "enabled": True}]}
ROPE_BOOK = {"entries": [{"keys": ["lamp"], "content": "Mira hid the rope.", "enabled": True}]}


@pytest.fixture
def party(lantern, committed):
    card_services.card_import(  # the server's active character is Mira
        server=lantern, raw=card_bytes("Mira", character_book=ROPE_BOOK), filename="m.json", by=SYSTEM
    )
    add_card(lantern, "Tomas", character_book=LAMP_BOOK, tags=["sailor"])
    add_card(lantern, "Old Tom")
    with committed(execute=True):
        return services.group_save(
            server=lantern, name="Party", members=["Mira", "Tomas", "Old Tom"], by=SYSTEM
        )


def group_doc(speaker: str, group: str = "Party", **extra) -> dict[str, Any]:
    return {
        "names": {"user": "Ann", "char": speaker},
        "history": [{"role": "user", "name": "Ann", "content": "Is the lamp lit?"}],
        "group": {"name": group, "speaker": speaker},
        **extra,
    }


def test_the_speaker_answers_with_its_own_card_and_only_its_own_book(lantern, party):
    result = assemble_for_server(
        server_id=lantern.pk, doc=parse_buckets(group_doc("Tomas")), native=True, seed=1
    )
    text = "\n".join(m.content for m in result.messages)
    assert "Tomas keeps the lighthouse." in text and "Mira keeps the lighthouse." not in text
    assert "Tomas lit the lamp." in text and "Mira hid the rope." not in text
    assert [a["book"] for a in result.to_dict()["world_info"]["activated"]] == ["Tomas (card)"]


def test_an_unknown_group_or_a_speaker_outside_it_is_refused_by_name(lantern, party):
    with pytest.raises(GroupRefused, match="no group named “Crew”"):
        assemble_for_server(server_id=lantern.pk, doc=parse_buckets(group_doc("Tomas", group="Crew")))
    with pytest.raises(GroupRefused, match="“Gull” is not a member of the group “Party”"):
        assemble_for_server(server_id=lantern.pk, doc=parse_buckets(group_doc("Gull")))


def post(client, server_id, body, token):
    return client.post(
        reverse("assembly:api-assemble", args=[server_id]),
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def test_the_assemble_api_answers_400_with_the_sentence(client, lantern, party, api_token):
    answer = post(client, lantern.pk, group_doc("Gull"), api_token)
    assert answer.status_code == 400
    assert answer.json() == {"error": "“Gull” is not a member of the group “Party”."}
    assert post(client, lantern.pk, group_doc("Tomas"), api_token).status_code == 200


def test_charlie_cannot_assemble_for_the_lantern_guilds_group_from_harbor_hall(
    client, lantern, party, harbor, harbor_token
):
    answer = post(client, harbor.pk, group_doc("Tomas"), harbor_token)
    assert answer.status_code == 400 and "no group named “Party”" in answer.json()["error"]
    assert post(client, lantern.pk, group_doc("Tomas"), harbor_token).status_code == 404


def test_the_speakers_note_in_the_channel_is_its_scenario_unless_the_chat_overrides_it(
    lantern, party, committed
):
    with committed(execute=True):
        services.member_note_set(
            server=lantern,
            group_name="Party",
            channel_id=77,
            member="Tomas",
            text="Tomas hides the key.",
            by=SYSTEM,
        )
    _, card, doc = group_turn(lantern.pk, parse_buckets(group_doc("Tomas")), 77)
    assert present(card).name == "Tomas" and present(doc.group).scenario_override == "Tomas hides the key."
    _, _, elsewhere = group_turn(lantern.pk, parse_buckets(group_doc("Tomas")), 78)
    assert present(elsewhere.group).scenario_override is None
    _, _, other = group_turn(lantern.pk, parse_buckets(group_doc("Mira")), 77)
    assert present(other.group).scenario_override is None
    overridden = group_doc("Tomas")
    overridden["group"]["scenario_override"] = "A calm night."
    _, _, kept = group_turn(lantern.pk, parse_buckets(overridden), 77)
    assert present(kept.group).scenario_override == "A calm night."


def test_a_channel_using_a_group_lets_the_member_named_as_char_answer(lantern, party, committed):
    with committed(execute=True):
        services.channel_group_set(server=lantern, channel_id=77, group=party, by=SYSTEM)
    doc: dict[str, Any] = {
        "names": {"user": "Ann", "char": "Tomas"},
        "history": [{"role": "user", "name": "Ann", "content": "Lamp?"}],
    }
    result = assemble_for_server(
        server_id=lantern.pk, doc=parse_buckets(doc), native=True, seed=1, channel=77
    )
    assert "Tomas keeps the lighthouse." in "\n".join(m.content for m in result.messages)
    doc["names"]["char"] = "Lantern"
    result = assemble_for_server(
        server_id=lantern.pk, doc=parse_buckets(doc), native=True, seed=1, channel=77
    )
    assert "Mira keeps the lighthouse." in "\n".join(m.content for m in result.messages)
    assert any("uses the group “Party”" in warning for warning in result.warnings)


def test_the_preview_shows_the_group_who_speaks_next_and_the_speakers_note(
    client, carol, lantern, party, committed
):
    with committed(execute=True):
        services.member_note_set(
            server=lantern,
            group_name="Party",
            channel_id=77,
            member="Tomas",
            text="Tomas hides the key.",
            by=SYSTEM,
        )
        services.group_save(
            server=lantern, name="Party", members=["Mira", "Tomas", "Old Tom"], muted=["Old Tom"],
            strategy="list", replace=True, by=SYSTEM,
        )  # fmt: skip
    client.force_login(carol)
    document = group_doc("Tomas", stm_context={"channel": "77", "user": "5"})
    page = client.post(
        reverse("assembly:preview-render", args=[lantern.pk]), {"document": json.dumps(document)}
    )
    body = page.content.decode()
    assert page.status_code == 200 and 'data-testid="preview-group"' in body
    assert "the group would have Mira, Tomas answer next" in body
    assert "Tomas hides the key." in body and "Old Tom (muted)" in body
    refused = client.post(
        reverse("assembly:preview-render", args=[lantern.pk]), {"document": json.dumps(group_doc("Gull"))}
    )
    assert "“Gull” is not a member of the group “Party”." in refused.content.decode()
