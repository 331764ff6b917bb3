"""Every denial: outsiders get 404, members without the role 403, visitors the sign-in page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from presets.models import Preset
from servers.models import AuditEvent

pytestmark = pytest.mark.django_db

READ_PAGES = ["presets:list", "presets:detail"]
WRITES = [
    ("presets:activate", {}),
    ("presets:deactivate", {}),
    ("presets:rename", {"name": "Taken over"}),
    ("presets:delete", {"confirmed": "1"}),
    ("presets:style", {"style": "standalone"}),
    ("presets:nodes-bulk", {"enabled": "0", "confirmed": "1"}),
]


def urls(server_id: int, preset: Preset) -> dict[str, str]:
    node = preset.nodes.get(identifier="main")
    return {
        "presets:list": reverse("presets:list", args=[server_id]),
        "presets:upload": reverse("presets:upload", args=[server_id]),
        "presets:detail": reverse("presets:detail", args=[server_id, preset.pk]),
        "presets:download": reverse("presets:download", args=[server_id, preset.pk]),
        "presets:node-toggle": reverse("presets:node-toggle", args=[server_id, preset.pk, node.pk]),
        **{name: reverse(name, args=[server_id, preset.pk]) for name, _ in WRITES},
    }


def test_charlie_gets_404_on_every_lantern_preset_page(client, charlie, lantern, house_style):
    client.force_login(charlie)
    for name, url in urls(lantern.id, house_style).items():
        assert client.get(url).status_code in (404, 405), name
        assert client.post(url, {"enabled": "0", "name": "x", "confirmed": "1"}).status_code in (404, 405), (
            name
        )
    assert Preset.objects.get(pk=house_style.pk).is_active


@pytest.mark.parametrize("persona", ["bob", "carol"])
def test_moderators_and_support_can_read_the_library(client, persona, request, lantern, house_style):
    client.force_login(request.getfixturevalue(persona))
    for name in READ_PAGES:
        assert client.get(urls(lantern.id, house_style)[name]).status_code == 200, name


@pytest.mark.parametrize("persona", ["bob", "carol"])
def test_moderators_and_support_get_403_on_every_write(client, persona, request, lantern, house_style):
    client.force_login(request.getfixturevalue(persona))
    all_urls = urls(lantern.id, house_style)
    for name, data in [*WRITES, ("presets:node-toggle", {"enabled": "0"}), ("presets:upload", {})]:
        assert client.post(all_urls[name], data).status_code == 403, name
    assert client.get(all_urls["presets:upload"]).status_code == 403
    assert client.get(all_urls["presets:download"]).status_code == 403
    house_style.refresh_from_db()
    assert house_style.is_active and house_style.name == "House Style"
    assert not house_style.nodes.filter(enabled=False).exclude(identifier="e9a5f3d7-drama").exists()
    assert not AuditEvent.objects.filter(actor__username=persona).exists()


@pytest.mark.parametrize("persona", ["bob", "carol"])
def test_read_only_members_see_no_management_buttons(client, persona, request, lantern, house_style):
    client.force_login(request.getfixturevalue(persona))
    listing = client.get(urls(lantern.id, house_style)["presets:list"]).content.decode()
    detail = client.get(urls(lantern.id, house_style)["presets:detail"]).content.decode()
    assert "Upload a preset" not in listing and "Activate" not in listing and "Delete" not in listing
    assert "Rename" not in detail and "hx-post" not in detail


def test_anonymous_visitors_are_sent_to_sign_in(client, lantern, house_style):
    for name, url in urls(lantern.id, house_style).items():
        response = client.get(url)
        assert response.status_code in (302, 405), name
        if response.status_code == 302:
            assert response.url.startswith("/login/"), name
    assert client.get(reverse("presets:help")).url.startswith("/login/")


def test_a_superuser_may_manage_any_server(client, superuser, harbor, harbor_preset):
    client.force_login(superuser)
    client.post(reverse("presets:deactivate", args=[harbor.id, harbor_preset.pk]))
    harbor_preset.refresh_from_db()
    assert not harbor_preset.is_active
