"""The preset page's "Download JSON" is the preset as it is now: the Versions page's download of the
newest version, with every edit, switch, move and rollback in it (docs/editor.md)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from presets.models import Preset
from tests.presets.editor.conftest import node

pytestmark = pytest.mark.django_db


def _download(client, preset: Preset) -> bytes:
    response = client.get(reverse("presets:download", args=[preset.server_id, preset.pk]))
    assert response.status_code == 200
    return response.content


def _newest_version_export(client, preset: Preset) -> bytes:
    preset.refresh_from_db()
    url = reverse("presets:version-download", args=[preset.server_id, preset.pk])
    response = client.get(f"{url}?version={preset.version}")
    assert response.status_code == 200
    return response.content


def _prompt(raw: bytes, identifier: str) -> dict:
    return next(p for p in json.loads(raw)["prompts"] if p["identifier"] == identifier)


def _order(raw: bytes) -> list[tuple[str, bool]]:
    orders = json.loads(raw)["prompt_order"]
    return [(entry["identifier"], entry["enabled"]) for entry in orders[-1]["order"]]


def _edit(client, preset: Preset, identifier: str, content: str) -> None:
    target = node(preset, identifier)
    preset.refresh_from_db()
    url = reverse("presets:node-edit", args=[preset.server_id, preset.pk, target.pk])
    data = {"name": target.name, "content": content, "role": target.role, "version": preset.version}
    data |= {"injection_position": "0", "injection_depth": "4", "injection_order": "100"}
    assert client.post(url, data).status_code == 302


def test_alices_download_after_an_edit_has_her_edit_and_is_the_versions_export(client, alice, tavern):
    client.force_login(alice)
    _edit(client, tavern, "rules", "\nDuels are settled with riddles.")
    downloaded = _download(client, tavern)
    assert _prompt(downloaded, "rules")["content"] == "\nDuels are settled with riddles."
    assert downloaded == _newest_version_export(client, tavern)


def test_the_download_follows_toggles_moves_rollbacks_and_sampler_changes(client, alice, tavern, lantern):
    client.force_login(alice)
    args = [lantern.id, tavern.pk]
    _edit(client, tavern, "greet", "Greet every guest by name.")

    secret = node(tavern, "secret")
    client.post(reverse("presets:node-toggle", args=[*args, secret.pk]), {"enabled": "1"})
    assert ("secret", True) in _order(_download(client, tavern))

    tavern.refresh_from_db()
    rules = node(tavern, "rules")
    client.post(
        reverse("presets:node-move", args=[*args, rules.pk]), {"direction": "up", "version": tavern.version}
    )
    moved = [identifier for identifier, _ in _order(_download(client, tavern))]
    assert moved.index("rules") < moved.index("greet")
    assert _download(client, tavern) == _newest_version_export(client, tavern)

    client.post(reverse("presets:rollback", args=args), {"to": "1"})
    rolled_back = _download(client, tavern)
    assert _prompt(rolled_back, "greet")["content"] == "Greet every guest warmly."
    assert ("secret", False) in _order(rolled_back)
    assert rolled_back == _newest_version_export(client, tavern)

    before = json.loads(rolled_back).get("temperature")
    sampling = reverse("presets:sampling", args=[lantern.id])
    client.post(sampling, {"mode": "server", "provider": "openai", "value-temperature": "0.3"})
    after_sampling = _download(client, tavern)
    # the server's sampler choice is the server's: the preset's file keeps its own values
    assert json.loads(after_sampling).get("temperature") == before
    assert after_sampling == _newest_version_export(client, tavern)


def test_a_download_re_imports_as_the_same_nodes_the_editor_shows(client, alice, tavern, lantern):
    from presets import services

    client.force_login(alice)
    _edit(client, tavern, "rules", "\n\nTwo blank lines first, then the rule.")
    downloaded = _download(client, tavern)
    copy = services.preset_import(server=lantern, raw=downloaded, filename="Copy.json", by=alice).preset
    assert node(copy, "rules").content == "\n\nTwo blank lines first, then the rule."
    assert [n.identifier for n in copy.nodes.order_by("position")] == [
        n.identifier for n in tavern.nodes.order_by("position")
    ]
