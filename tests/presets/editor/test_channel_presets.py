"""A preset per channel: it wins over the server's active preset there, a thread inherits its
parent's, the assemble API and the preview choose it, and it is cached like the active one."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from presets import services
from presets.channels import services as channel_services
from presets.models import Preset
from tests.presets.conftest import make_preset
from tests.presets.editor.conftest import assembled_text

pytestmark = pytest.mark.django_db(transaction=True)

TAVERN_HALL, THREAD, CELLAR = 7001, 7002, 7003


@pytest.fixture
def library(lantern, alice) -> Preset:
    raw = make_preset(("hush", "Whisper, this is a library.", True))
    return services.preset_import(
        server=lantern, raw=raw, filename="Library.json", activate=False, by=alice
    ).preset


def in_channel(channel: int, parent: int | None = None) -> dict:
    from assembly.selectors import default_document

    document = default_document()
    document["stm_context"] = {
        "channel": channel,
        "user": 99,
        **({"parent_channel": parent} if parent else {}),
    }
    return document


def test_a_channel_override_wins_over_the_servers_preset_and_its_thread_inherits_it(
    tavern, library, lantern, alice
):
    channel_services.channel_preset_set(server=lantern, channel_id=TAVERN_HALL, preset=library, by=alice)
    assert "Whisper, this is a library." in assembled_text(lantern.id, in_channel(TAVERN_HALL))
    in_thread = assembled_text(lantern.id, in_channel(THREAD, parent=TAVERN_HALL))
    assert "Whisper, this is a library." in in_thread and "No fighting" not in in_thread
    elsewhere = assembled_text(lantern.id, in_channel(CELLAR))
    assert "No fighting in the tavern." in elsewhere and "Whisper" not in elsewhere


def test_a_thread_with_its_own_preset_does_not_inherit(tavern, library, lantern, alice):
    channel_services.channel_preset_set(server=lantern, channel_id=TAVERN_HALL, preset=library, by=alice)
    channel_services.channel_preset_set(server=lantern, channel_id=THREAD, preset=tavern, by=alice)
    assert "No fighting in the tavern." in assembled_text(lantern.id, in_channel(THREAD, parent=TAVERN_HALL))


def test_clearing_a_channel_brings_back_the_active_preset(tavern, library, lantern, alice):
    channel_services.channel_preset_set(server=lantern, channel_id=TAVERN_HALL, preset=library, by=alice)
    assembled_text(lantern.id, in_channel(TAVERN_HALL))  # warm the cache
    channel_services.channel_preset_set(server=lantern, channel_id=TAVERN_HALL, preset=None, by=alice)
    assert "No fighting in the tavern." in assembled_text(lantern.id, in_channel(TAVERN_HALL))


def test_editing_a_channels_preset_reaches_the_next_assembly(tavern, library, lantern, alice):
    from presets.editor import services as edit_services

    channel_services.channel_preset_set(server=lantern, channel_id=TAVERN_HALL, preset=library, by=alice)
    assembled_text(lantern.id, in_channel(TAVERN_HALL))
    hush = library.nodes.get(identifier="hush")
    edit_services.node_update(
        preset=library, node_id=hush.pk, values={"content": "Silence, please."}, base_version=None, by=alice
    )
    assert "Silence, please." in assembled_text(lantern.id, in_channel(TAVERN_HALL))


def post_assemble(client, token, server_id: int, body: dict):
    return client.post(
        reverse("assembly:api-assemble", args=[server_id]),
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def test_the_assemble_api_uses_the_preset_of_the_stm_context_channel(
    client, api_token, tavern, library, lantern, alice
):
    channel_services.channel_preset_set(server=lantern, channel_id=TAVERN_HALL, preset=library, by=alice)
    body = post_assemble(client, api_token, lantern.id, in_channel(THREAD, parent=TAVERN_HALL)).json()
    assert body["preset"] == "Library"


def test_a_warm_assemble_request_naming_a_channel_makes_no_sql_query(
    client, api_token, tavern, library, lantern, alice, django_assert_num_queries
):
    from assembly.selectors import default_document

    channel_services.channel_preset_set(server=lantern, channel_id=TAVERN_HALL, preset=library, by=alice)
    body = {**default_document(), "channel": THREAD, "parent_channel": TAVERN_HALL}
    assert post_assemble(client, api_token, lantern.id, body).json()["preset"] == "Library"
    with django_assert_num_queries(0):
        assert post_assemble(client, api_token, lantern.id, body).json()["preset"] == "Library"
    elsewhere = {**default_document(), "channel": CELLAR}
    assert post_assemble(client, api_token, lantern.id, elsewhere).json()["preset"] == "Tavern"


def test_the_preview_chooses_the_channels_preset(client, tavern, library, lantern, alice):
    channel_services.channel_preset_set(server=lantern, channel_id=TAVERN_HALL, preset=library, by=alice)
    client.force_login(alice)
    response = client.post(
        reverse("assembly:preview-render", args=[lantern.id]),
        {"document": json.dumps(in_channel(TAVERN_HALL)), "preset": "active"},
    )
    assert response.status_code == 200
    assert "Whisper, this is a library." in response.content.decode()


def test_the_presets_list_shows_which_channels_use_which_preset(client, tavern, library, lantern, alice, bob):
    channel_services.channel_preset_set(server=lantern, channel_id=TAVERN_HALL, preset=library, by=alice)
    client.force_login(bob)
    page = client.get(reverse("presets:list", args=[lantern.id])).content.decode()
    assert str(TAVERN_HALL) in page and "Library" in page


def test_alice_sets_a_channel_preset_from_the_list_and_bob_may_not(
    client, tavern, library, lantern, alice, bob
):
    url = reverse("presets:channel-set", args=[lantern.id])
    client.force_login(bob)
    assert client.post(url, {"channel": str(TAVERN_HALL), "preset": str(library.pk)}).status_code == 403
    client.force_login(alice)
    assert client.post(url, {"channel": str(TAVERN_HALL), "preset": str(library.pk)}).status_code == 302
    assert lantern.channel_presets.get().preset == library
