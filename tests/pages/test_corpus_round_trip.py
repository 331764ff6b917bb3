"""Alice opens the form of every node of every real community preset, and of groups whose join texts
come from those presets, and saves it as it is: nothing changes. A form that lost the leading newline
of a text (the HTML parser drops the one right after `<textarea>`) would change 460 of the corpus's
prompts, and a group's join suffix "\\n[end]" would lose its line break."""

from __future__ import annotations

import json

import pytest
from django.contrib.messages import get_messages
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.datastructures import MultiValueDict

from engine import GENERATION_TYPES, ROLES, editing
from engine.st_format import PresetNode as StNode
from presets import services
from presets.editor.services import edited_node
from presets.editor.views import _posted_values
from presets.models import Preset
from presets.selectors import ST_NODE_FIELDS, st_node_from_row
from tests.corpus import CORPUS, needs_corpus
from tests.form_submission import submitted

pytestmark = [needs_corpus, pytest.mark.django_db]

PRESETS = sorted(p for p in (CORPUS / "pm").glob("*.json") if "corrupt" not in p.name)
CARDS = sorted((CORPUS / "cards").glob("*.json"))
JOIN_MAX = 2000  # the group form's limit on a join text


def _stored_nodes(preset: Preset) -> list[tuple[int, StNode]]:
    rows = preset.nodes.order_by("position").values_list("pk", *ST_NODE_FIELDS)
    return [(row[0], st_node_from_row(row[1:])) for row in rows]


def _save_unchanged(client, url: str) -> list[str]:
    """Open the form at `url`, send it as it is; the messages the answer leaves for the next page."""
    page = client.get(url)
    assert page.status_code == 200, url
    answer = client.post(url, submitted(page.content.decode(), action=url))
    assert answer.status_code == 302, answer.content.decode()[:300]
    return [str(message) for message in get_messages(answer.wsgi_request)]


def test_saving_every_corpus_node_unchanged_changes_nothing(client, alice, lantern):
    """Every node's form is rendered (the template the page and the in-place editor share), read as a
    browser reads it, taken back through the view's reading of a post and the editor's normalisation:
    the node that comes out is the node stored. The first node of each preset that opens with a line
    break, and the first with a CR in it, go the whole way through the pages."""
    client.force_login(alice)
    checked = with_leading_newline = through_pages = 0
    for path in PRESETS:
        preset = services.preset_import(
            server=lantern, raw=path.read_bytes(), filename=path.name, by=alice
        ).preset
        stored = _stored_nodes(preset)
        for _pk, old in stored:
            values = {name: getattr(old, name) for name in editing.EDITABLE_FIELDS}
            context = {"node": old, "values": values, "roles": ROLES, "generation_types": GENERATION_TYPES}
            form = submitted(render_to_string("presets/_node_fields.html", context))
            posted = _posted_values(MultiValueDict(form), marker=old.kind == "marker")
            assert edited_node(old, posted).node == old, f"{path.name}: {old.identifier} changed"
            checked += 1
            with_leading_newline += old.content.startswith("\n")
        chosen = {
            next((pk for pk, n in stored if n.content.startswith("\n")), None),
            next((pk for pk, n in stored if "\r" in n.content), None),
        }
        version = preset.version
        for pk in chosen - {None}:
            said = _save_unchanged(client, reverse("presets:node-edit", args=[lantern.id, preset.pk, pk]))
            assert any(text.startswith("Nothing to save") for text in said), said
            through_pages += 1
        preset.refresh_from_db()
        assert preset.version == version and _stored_nodes(preset) == stored, path.name
        Preset.objects.filter(pk=preset.pk).delete()
    print(
        f"\n{checked} nodes of {len(PRESETS)} presets round-tripped ({with_leading_newline} open with a newline; {through_pages} saved through the pages)"
    )
    assert checked >= 4000 and with_leading_newline >= 400 and through_pages >= len(PRESETS) / 2


def test_saving_every_group_unchanged_keeps_its_join_texts(client, alice, lantern):
    from characters.services import card_import
    from groups.models import Group
    from groups.services import group_save

    names = [
        card_import(server=lantern, raw=p.read_bytes(), filename=p.name, by=alice).row.name for p in CARDS
    ]
    joins = ["\n[end]"]
    for path in PRESETS:
        prompts = json.loads(path.read_bytes()).get("prompts") or []
        first = next(
            (
                text
                for p in prompts
                if isinstance(text := p.get("content"), str)
                and text.startswith("\n")
                and len(text) <= JOIN_MAX
            ),
            None,
        )
        if first is not None:
            joins.append(first)
    for index, text in enumerate(joins):
        group_save(
            server=lantern,
            name=f"Table {index}",
            members=names,
            muted=[],
            mode="join_include_muted",
            join_prefix=text,
            join_suffix=joins[0],
            strategy="list",
            allow_self_responses=False,
            replace=False,
            by=alice,
        )
    client.force_login(alice)
    before = list(Group.objects.order_by("pk").values_list("name", "mode", "join_prefix", "join_suffix"))
    for pk in Group.objects.order_by("pk").values_list("pk", flat=True):
        _save_unchanged(client, reverse("groups:edit", args=[lantern.id, pk]))
    assert (
        list(Group.objects.order_by("pk").values_list("name", "mode", "join_prefix", "join_suffix")) == before
    )
    print(f"\n{len(before)} groups saved unchanged")
    assert len(before) >= 10 and before[0][3] == "\n[end]"
