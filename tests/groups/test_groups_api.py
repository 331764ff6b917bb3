"""Groups through the API (docs/groups.md#the-api): the bot creates, replaces, reads and
deletes a group with the `group create` options as JSON, sets a channel's group, and is refused as
the command line refuses; another server's token reaches nothing."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from groups import selectors
from groups.models import ChannelGroup
from groups.models import Group as GroupRow
from servers.models import AuditEvent

pytestmark = pytest.mark.django_db


def call(client, method, url, token, body=None):
    data = None if body is None else json.dumps(body)
    return getattr(client, method)(
        url, data=data, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def group_url(server_id, name="Party"):
    return reverse("groups:api-detail", args=[server_id, name])


def channel_url(server_id, channel=77):
    return reverse("groups:api-channel", args=[server_id, channel])


def test_the_bot_creates_a_group_with_a_put_and_reads_it_back(client, lantern, party_cards, api_token):
    body = {
        "members": ["Mira", "Tomas", "Old Tom"],
        "muted": ["Old Tom"],
        "mode": "join_exclude_muted",
        "join_prefix": "\n<FIELDNAME> of {{char}}:",
        "strategy": "list",
        "allow_self_responses": True,
    }
    made = call(client, "put", group_url(1001), api_token, body)
    assert made.status_code == 201, made.content
    shown = made.json()
    assert [(m["name"], m["muted"]) for m in shown["members"]] == [
        ("Mira", False),
        ("Tomas", False),
        ("Old Tom", True),
    ]
    assert shown["join_prefix"] == "\n<FIELDNAME> of {{char}}:"  # kept byte for byte
    assert (shown["mode"], shown["strategy"], shown["allow_self_responses"]) == (
        "join_exclude_muted",
        "list",
        True,
    )
    assert AuditEvent.objects.get(action="group.create").actor_label.startswith("api token")
    read = call(client, "get", group_url(1001), api_token).json()
    assert read["members"][2]["id"] == party_cards["Old Tom"].pk


def test_a_second_put_replaces_the_group_and_keeps_its_channels(
    client, lantern, party_cards, api_token, committed
):
    with committed(execute=True):
        call(client, "put", group_url(1001), api_token, {"members": ["Mira", "Tomas"]})
        call(client, "put", channel_url(1001), api_token, {"group": "Party"})
        again = call(client, "put", group_url(1001), api_token, {"members": ["Tomas"], "mode": "swap"})
    assert again.status_code == 200 and [m["name"] for m in again.json()["members"]] == ["Tomas"]
    assert AuditEvent.objects.filter(action="group.replace").count() == 1
    assert selectors.channel_group(lantern.pk, 77) == "Party"


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ({"members": ["Mira", "Zed"]}, "This server has no character card named “Zed”."),
        ({"members": []}, "Name at least one member"),
        ({"members": ["Mira", "Mira"]}, "“Mira” is named twice"),
        ({"members": ["Mira"], "muted": ["Tomas"]}, "“Tomas” is muted but is not a member"),
        ({"members": ["Mira"], "mode": "merge"}, "“merge” is not a generation mode"),
        ({"members": ["Mira"], "strategy": "loud"}, "“loud” is not an activation strategy"),
        ({"members": "Mira,Tomas"}, "`members` must be a list of card names."),
        (
            {"members": ["Mira"], "allow_self_responses": "yes"},
            "`allow_self_responses` must be true or false.",
        ),
        ({"mode": "swap"}, "`members` must list the members"),
        ({"members": ["Mira"], "mebers": ["Tomas"]}, "Unknown field `mebers`"),
    ],
)
def test_a_put_is_refused_as_the_command_line_refuses_and_nothing_is_stored(
    client, party_cards, api_token, body, sentence
):
    answer = call(client, "put", group_url(1001), api_token, body)
    assert answer.status_code == 400 and sentence in answer.json()["error"]
    assert not GroupRow.objects.exists() and not AuditEvent.objects.filter(action="group.create").exists()


def test_the_bot_deletes_a_group_and_its_channel_goes_back_to_the_character(
    client, lantern, party_cards, api_token, committed
):
    with committed(execute=True):
        call(client, "put", group_url(1001), api_token, {"members": ["Mira"]})
        call(client, "put", channel_url(1001), api_token, {"group": "Party"})
        deleted = call(client, "delete", group_url(1001), api_token)
    assert deleted.status_code == 200 and deleted.json() == {"deleted": "Party"}
    assert not ChannelGroup.objects.exists()
    assert call(client, "get", group_url(1001), api_token).status_code == 404
    assert call(client, "delete", group_url(1001), api_token).status_code == 404


def test_the_bot_sets_and_clears_a_channels_group(client, lantern, party_cards, api_token, committed):
    with committed(execute=True):
        call(client, "put", group_url(1001), api_token, {"members": ["Mira"]})
        set_ = call(client, "put", channel_url(1001), api_token, {"group": "Party"})
    assert set_.status_code == 200 and set_.json()["group"]["name"] == "Party"
    assert set_.json()["channel"] == "77"
    with committed(execute=True):
        cleared = call(client, "put", channel_url(1001), api_token, {"group": None})
    assert cleared.json() == {"channel": "77", "group": None}
    assert selectors.channel_group(lantern.pk, 77) is None
    with committed(execute=True):
        call(client, "put", channel_url(1001), api_token, {"group": "Party"})
        call(client, "delete", channel_url(1001), api_token)
    assert selectors.channel_group(lantern.pk, 77) is None
    actions = list(
        AuditEvent.objects.filter(action__startswith="group.channel").values_list("action", flat=True)
    )
    assert sorted(actions) == [
        "group.channel.clear",
        "group.channel.clear",
        "group.channel.set",
        "group.channel.set",
    ]


@pytest.mark.parametrize(
    ("body", "status", "sentence"),
    [
        ({"group": "Crew"}, 404, "no group named “Crew”"),
        ({"group": 5}, 400, "`group` must be a group's name or null."),
        ({}, 400, "`group` must name one of the server's groups"),
        ({"group": "Party", "chanel": "77"}, 400, "Unknown field `chanel`"),
    ],
)
def test_a_bad_channel_choice_is_refused(client, party_cards, api_token, committed, body, status, sentence):
    with committed(execute=True):
        call(client, "put", group_url(1001), api_token, {"members": ["Mira"]})
    answer = call(client, "put", channel_url(1001), api_token, body)
    assert answer.status_code == status and sentence in answer.json()["error"]
    assert not ChannelGroup.objects.exists()


def test_charlie_cannot_read_make_delete_or_use_the_lantern_guilds_groups(
    client, lantern, harbor, party_cards, harbor_card, api_token, harbor_token, committed
):
    with committed(execute=True):
        call(client, "put", group_url(1001), api_token, {"members": ["Mira"]})
    for method, url, body in (
        ("get", group_url(1001), None),
        ("put", group_url(1001), {"members": ["Gull"]}),
        ("delete", group_url(1001), None),
        ("put", channel_url(1001), {"group": "Party"}),
    ):
        assert call(client, method, url, harbor_token, body).status_code == 404
    # On his own server, the Lantern Guild's cards and groups are not there to be named.
    mine = call(client, "put", group_url(harbor.pk), harbor_token, {"members": ["Mira"]})
    assert mine.status_code == 400 and "no character card named “Mira”" in mine.json()["error"]
    assert call(client, "put", channel_url(harbor.pk), harbor_token, {"group": "Party"}).status_code == 404
    assert [g.name for g in GroupRow.objects.filter(server=lantern)] == ["Party"]
    assert not GroupRow.objects.filter(server=harbor).exists()


def test_a_post_on_a_group_names_the_methods_to_use(client, party_cards, api_token):
    answer = call(client, "post", group_url(1001), api_token, {"members": ["Mira"]})
    assert answer.status_code == 405 and "PUT" in answer.json()["error"]
