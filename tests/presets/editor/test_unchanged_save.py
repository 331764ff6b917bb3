"""Alice saves a node's form as it opened: nothing is recorded, and the text keeps its leading line
break and its line ends (a browser sends every line end as CRLF)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from presets.editor import services as edit_services
from presets.versions import selectors as versions
from tests.form_submission import submitted
from tests.presets.editor.conftest import node

pytestmark = pytest.mark.django_db


def _save_as_opened(client, preset, identifier: str):
    url = reverse("presets:node-edit", args=[preset.server_id, preset.pk, node(preset, identifier).pk])
    return client.post(url, submitted(client.get(url).content.decode(), action=url), follow=True)


def test_an_unchanged_save_records_no_version_and_says_so(client, alice, tavern):
    edit_services.node_update(
        preset=tavern,
        node_id=node(tavern, "rules").pk,
        values={"content": "\nNo fighting.\r\nNot even with words."},
        base_version=1,
        by=alice,
    )
    client.force_login(alice)
    page = _save_as_opened(client, tavern, "rules").content.decode()
    assert "Nothing to save" in page
    assert [v.number for v in versions.versions_of(tavern)] == [2, 1]
    assert node(tavern, "rules").content == "\nNo fighting.\r\nNot even with words."


def test_a_changed_text_is_stored_with_its_leading_line_break(client, alice, tavern):
    client.force_login(alice)
    url = reverse("presets:node-edit", args=[tavern.server_id, tavern.pk, node(tavern, "greet").pk])
    form = submitted(client.get(url).content.decode(), action=url)
    form["content"] = ["\r\nGreet every guest.\r\n"]
    client.post(url, form)
    assert node(tavern, "greet").content == "\nGreet every guest.\n"
    assert [v.number for v in versions.versions_of(tavern)] == [2, 1]
