"""Alice's destructive and bulk taps ask first and name what they affect; nothing happens until she
confirms, with or without JavaScript (docs/presets.md#asking-first)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from core.actors import SYSTEM
from groups.models import Group
from groups.services import channel_group_set, group_save
from presets.channels.services import channel_preset_set
from presets.models import Preset
from servers.directory import DirectoryChannel
from servers.services import directory_replace
from tests.groups.conftest import add_card
from tests.presets.editor.conftest import node

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
TAPROOM = 710_000_000_000_000_001


@pytest.fixture
def taproom(lantern) -> int:
    directory_replace(
        server_id=lantern.id,
        channels=[DirectoryChannel(id=TAPROOM, name="taproom", parent=None, private=False)],
        members=[],
        by=SYSTEM,
    )
    return TAPROOM


def test_deleting_a_preset_names_its_channels_and_waits_for_a_yes(client, alice, lantern, tavern, taproom):
    channel_preset_set(server=lantern, channel_id=taproom, preset=tavern, by=alice)
    client.force_login(alice)
    url = reverse("presets:delete", args=[lantern.id, tavern.pk])
    asked = client.post(url).content.decode()
    assert "Delete the preset “Tavern”?" in asked and "#taproom" in asked and "active preset" in asked
    assert 'name="confirmed" value="1"' in asked and Preset.objects.filter(pk=tavern.pk).exists()
    client.post(url, {"confirmed": "1"})
    assert not Preset.objects.filter(pk=tavern.pk).exists()


def test_under_htmx_the_question_takes_the_page_and_its_button_is_a_plain_form(
    client, alice, lantern, tavern
):
    client.force_login(alice)
    url = reverse("presets:delete", args=[lantern.id, tavern.pk])
    answer = client.post(url, **HX)
    assert answer["HX-Retarget"] == "#main" and "<html" not in answer.content.decode()
    assert "hx-post" not in answer.content.decode() and Preset.objects.filter(pk=tavern.pk).exists()


def test_disable_all_counts_the_nodes_says_versions_can_roll_it_back_and_keeps_the_filter(
    client, alice, lantern, tavern
):
    client.force_login(alice)
    url = reverse("presets:nodes-bulk", args=[lantern.id, tavern.pk])
    asked = client.post(url, {"enabled": "0", "q": "greet"}).content.decode()
    assert "Disable 1 node of “Tavern”?" in asked and "Versions can roll this back" in asked
    assert 'name="q" value="greet"' in asked and node(tavern, "greet").enabled
    client.post(url, {"enabled": "0", "q": "greet", "confirmed": "1"})
    assert not node(tavern, "greet").enabled and node(tavern, "rules").enabled


def test_deleting_a_node_says_versions_can_roll_it_back(client, alice, lantern, tavern):
    client.force_login(alice)
    url = reverse("presets:node-delete", args=[lantern.id, tavern.pk, node(tavern, "rules").pk])
    asked = client.post(url, {"version": "1"}).content.decode()
    assert "Delete the node “Rules” from “Tavern”?" in asked and "Versions can roll this back" in asked
    assert node(tavern, "rules")
    client.post(url, {"version": "1", "confirmed": "1"})
    assert not tavern.nodes.filter(identifier="rules").exists()


def test_deleting_a_group_names_the_channels_that_use_it(client, alice, lantern, taproom):
    add_card(lantern, "Mira")
    group = group_save(server=lantern, name="Party", members=["Mira"], by=alice)
    channel_group_set(server=lantern, channel_id=taproom, group=group, by=alice)
    client.force_login(alice)
    url = reverse("groups:delete", args=[lantern.pk, group.pk])
    asked = client.post(url).content.decode()
    assert "Delete the group “Party”?" in asked and "#taproom" in asked and Group.objects.exists()
    client.post(url, {"confirmed": "1"})
    assert not Group.objects.exists()


def test_deleting_a_card_names_the_groups_it_leaves(client, alice, lantern):
    from characters.models import Card

    mira = add_card(lantern, "Mira")
    group_save(server=lantern, name="Party", members=["Mira"], by=alice)
    client.force_login(alice)
    url = reverse("characters:delete", args=[lantern.pk, mira.pk])
    asked = client.post(url, **HX).content.decode()
    assert "Delete the card “Mira”?" in asked and "It leaves the group “Party”" in asked
    assert Card.objects.filter(pk=mira.pk).exists()
    client.post(url, {"confirmed": "1"})
    assert not Card.objects.filter(pk=mira.pk).exists()


def test_bob_cannot_learn_what_a_delete_would_affect(client, bob, lantern, tavern):
    client.force_login(bob)
    assert client.post(reverse("presets:delete", args=[lantern.id, tavern.pk])).status_code == 403
