"""A name clash on upload offers "Replace" and "Keep both", which finish the upload from a copy kept
briefly server-side, per user, without choosing the file again."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from core.actors import SYSTEM
from devtools.factories import make_preset
from presets.models import Preset
from servers.models import Role
from servers.services import membership_set
from tests.presets.conftest import upload

pytestmark = pytest.mark.django_db

NEW = make_preset(("x", "X.", True), ("y", "Y.", True))


def _clash(client, lantern) -> str:
    response = upload(client, lantern.id, NEW, "House Style.json")
    assert response.status_code == 409
    assert "Do you want to replace it, or keep both?" in response.context["error"]
    html = response.content.decode()
    assert 'data-testid="clash-replace"' in html and 'data-testid="clash-keep-both"' in html
    return response.context["pending"]


def _finish(client, lantern, token: str, choice: str):
    return client.post(reverse("presets:upload", args=[lantern.id]), {"pending": token, "resolve": choice})


def test_replace_finishes_the_upload_without_the_file(client, alice, lantern, house_style):
    client.force_login(alice)
    token = _clash(client, lantern)
    review = _finish(client, lantern, token, "replace")  # first: what it would change (docs/editor.md)
    assert review.status_code == 200 and 'data-testid="replace-review"' in review.content.decode()
    response = client.post(
        reverse("presets:upload", args=[lantern.id]), {"pending": token, "resolve": "replace", "confirm": "1"}
    )
    preset = Preset.objects.get(server=lantern)
    assert response.status_code == 302 and response.url.endswith(f"/presets/{preset.pk}/?imported=1")
    assert preset.name == house_style.name
    assert set(preset.nodes.values_list("identifier", flat=True)) >= {"x", "y"}


def test_keep_both_finishes_the_upload_as_a_numbered_copy(client, alice, lantern, house_style):
    client.force_login(alice)
    response = _finish(client, lantern, _clash(client, lantern), "keep_both")
    assert response.status_code == 302
    assert sorted(Preset.objects.filter(server=lantern).values_list("name", flat=True)) == [
        "House Style",
        "House Style (2)",
    ]


def test_a_finished_upload_is_deleted_and_cannot_be_finished_twice(client, alice, lantern, house_style):
    client.force_login(alice)
    token = _clash(client, lantern)
    _finish(client, lantern, token, "keep_both")
    again = _finish(client, lantern, token, "keep_both")
    assert again.status_code == 410 and "choose the file again" in again.context["error"]
    assert Preset.objects.filter(server=lantern).count() == 2


def test_another_admin_cannot_finish_alices_upload(client, alice, lantern, house_style, django_user_model):
    client.force_login(alice)
    token = _clash(client, lantern)
    dora = django_user_model.objects.create_user(username="dora", password="x")
    membership_set(server=lantern, user=dora, role=Role.ADMIN, by=SYSTEM)
    client.force_login(dora)
    assert _finish(client, lantern, token, "replace").status_code == 410
    assert Preset.objects.get(server=lantern).node_count == house_style.node_count


def test_the_kept_upload_expires(client, alice, lantern, house_style, settings):
    settings.PRESET_PENDING_UPLOAD_SECONDS = 1
    client.force_login(alice)
    token = _clash(client, lantern)
    time.sleep(1.5)
    assert _finish(client, lantern, token, "replace").status_code == 410


def test_keeping_both_again_and_again_numbers_each_copy_even_when_the_cut_name_ends_in_spaces(lantern, alice):
    from presets.services import preset_import  # the service alone: no page in the way

    name = "a" * 88 + " " * 8 + "tail"  # 100 characters: a copy's cut name ends where the spaces are
    kept = [
        preset_import(
            server=lantern, raw=NEW, filename="x.json", name=name, on_clash="keep_both", by=alice
        ).preset.name
        for _ in range(3)
    ]
    assert kept == [name, "a" * 88 + " (2)", "a" * 88 + " (3)"]
