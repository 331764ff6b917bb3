"""The bot's preset API: list, active preset (from the cache), import with the page's rules."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from devtools.factories import make_preset
from presets.models import Preset
from servers.models import AuditEvent

pytestmark = pytest.mark.django_db

LIST = "/api/v1/servers/{}/presets"
ACTIVE = "/api/v1/servers/{}/presets/active"


def bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def test_the_bot_lists_the_servers_presets(client, lantern, house_style, second_preset, api_token):
    response = client.get(LIST.format(lantern.id), **bearer(api_token))
    assert response.status_code == 200
    rows = {row["name"]: row for row in response.json()["presets"]}
    assert rows["House Style"]["active"] and not rows["Second"]["active"]
    assert rows["House Style"]["nodes"] == 12 and rows["House Style"]["shape"] == "prompt_manager"


def test_the_bot_reads_the_active_preset_with_its_nodes(client, lantern, house_style, api_token):
    preset = client.get(ACTIVE.format(lantern.id), **bearer(api_token)).json()["preset"]
    assert preset["preset_id"] == house_style.pk and preset["injection_style"] == "merge"
    assert preset["nodes"][0]["identifier"] == "main" and len(preset["nodes"]) == 12
    assert preset["settings"]["squash_system_messages"] is True


def test_with_no_active_preset_the_api_says_null(client, lantern, second_preset, api_token):
    assert client.get(ACTIVE.format(lantern.id), **bearer(api_token)).json() == {"preset": None}


def test_a_warm_active_preset_request_makes_no_queries(
    client, lantern, house_style, api_token, django_assert_num_queries
):
    client.get(ACTIVE.format(lantern.id), **bearer(api_token))
    with django_assert_num_queries(0):
        response = client.get(ACTIVE.format(lantern.id), **bearer(api_token))
    assert response.json()["preset"]["name"] == "House Style"


@pytest.mark.parametrize("path", [LIST, ACTIVE])
def test_a_request_without_a_token_gets_401(client, lantern, path):
    assert client.get(path.format(lantern.id)).status_code == 401


@pytest.mark.parametrize("header", ["Token abc", "Bearer", "Bearer " + "x" * 300, "tk_nobearer"])
def test_a_malformed_token_gets_401(client, lantern, api_token, header):
    assert client.get(LIST.format(lantern.id), HTTP_AUTHORIZATION=header).status_code == 401


def test_a_revoked_token_gets_401(client, lantern, alice, api_token):
    from servers.services import api_token_revoke

    api_token_revoke(token=lantern.api_tokens.get(), by=alice)
    response = client.get(LIST.format(lantern.id), **bearer(api_token))
    assert response.status_code == 401 and "error" in response.json()


@pytest.mark.parametrize("path", [LIST, ACTIVE])
def test_a_token_of_another_server_gets_404(client, lantern, harbor_token, path):
    assert client.get(path.format(lantern.id), **bearer(harbor_token)).status_code == 404
    assert (
        client.post(
            LIST.format(lantern.id), b"{}", content_type="application/json", **bearer(harbor_token)
        ).status_code
        == 404
    )


def test_the_bot_imports_a_raw_json_body_named_by_the_query(client, lantern, api_token):
    response = client.post(
        LIST.format(lantern.id) + "?name=Bot%20Upload",
        make_preset(("x", "X.", True)),
        content_type="application/json",
        **bearer(api_token),
    )
    assert response.status_code == 201
    report = response.json()
    assert report["name"] == "Bot Upload" and report["active"] and report["nodes"] == 4
    assert {"warnings", "shape", "toggleable", "depth_injections", "not_in_order"} <= set(report)
    event = AuditEvent.objects.get(server=lantern, action="preset.import")
    assert event.actor is None and event.actor_label == "api token " + api_token[:10]


def test_the_bot_imports_a_multipart_file(client, lantern, api_token, demo_bytes):
    response = client.post(
        LIST.format(lantern.id),
        {"file": SimpleUploadedFile("Lantern.json", demo_bytes), "activate": "false"},
        **bearer(api_token),
    )
    assert response.status_code == 201
    assert response.json()["name"] == "Lantern" and not Preset.objects.get(server=lantern).is_active


def test_a_name_clash_gets_409_unless_replace_or_keep_both(
    client, lantern, house_style, api_token, demo_bytes
):
    url = LIST.format(lantern.id) + "?name=House%20Style"
    clash = client.post(url, demo_bytes, content_type="application/json", **bearer(api_token))
    assert clash.status_code == 409 and "replace=true" in clash.json()["error"]
    replaced = client.post(
        url + "&replace=true", demo_bytes, content_type="application/json", **bearer(api_token)
    )
    assert (
        replaced.status_code == 201 and replaced.json()["replaced"] and replaced.json()["carried_over"] == 10
    )
    kept = client.post(
        url + "&keep_both=true", demo_bytes, content_type="application/json", **bearer(api_token)
    )
    assert kept.json()["name"] == "House Style (2)"


def test_a_refused_file_gets_400_with_one_sentence(client, lantern, api_token):
    body = json.dumps({"entries": {"0": {"key": ["dragon"], "content": "Dragons."}}})
    response = client.post(
        LIST.format(lantern.id), body, content_type="application/json", **bearer(api_token)
    )
    assert response.status_code == 400
    assert "World Info" in response.json()["error"]
    assert not Preset.objects.exists()


def test_an_oversized_body_gets_413(client, lantern, api_token, settings):
    settings.PRESET_MAX_BYTES = 512
    body = make_preset(("x", "y" * 1000, True))
    response = client.post(
        LIST.format(lantern.id), body, content_type="application/json", **bearer(api_token)
    )
    assert response.status_code == 413 and "error" in response.json()


def test_an_empty_body_gets_400(client, lantern, api_token):
    response = client.post(LIST.format(lantern.id), b"", content_type="application/json", **bearer(api_token))
    assert response.status_code == 400


@pytest.mark.django_db(transaction=True)
def test_an_api_import_refreshes_the_cached_active_preset(client, lantern, house_style, api_token):
    client.get(ACTIVE.format(lantern.id), **bearer(api_token))
    client.post(
        LIST.format(lantern.id) + "?name=Newest",
        make_preset(),
        content_type="application/json",
        **bearer(api_token),
    )
    assert client.get(ACTIVE.format(lantern.id), **bearer(api_token)).json()["preset"]["name"] == "Newest"
