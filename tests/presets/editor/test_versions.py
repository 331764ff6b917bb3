"""Preset versions: every write records one, the diff names what changed, rollback restores."""

from __future__ import annotations

import json

import pytest

from presets import services
from presets.editor import services as edit_services
from presets.models import Preset, PresetVersion
from presets.versions import selectors as versions
from tests.corpus import needs_corpus
from tests.present import present
from tests.presets.conftest import make_preset
from tests.presets.editor.conftest import CORPUS, assembled_text, node, order

pytestmark = pytest.mark.django_db


def test_an_import_is_version_one_and_each_write_adds_the_next(tavern, alice):
    assert [v.number for v in versions.versions_of(tavern)] == [1]
    services.node_set_enabled(node=node(tavern, "secret"), enabled=True, by=alice)
    edit_services.node_update(
        preset=tavern,
        node_id=node(tavern, "rules").pk,
        values={"content": "Fights outside."},
        base_version=2,
        by=alice,
    )
    rows = versions.versions_of(tavern)
    assert [(v.number, v.kind) for v in rows] == [(3, "edit"), (2, "toggle"), (1, "import")]
    assert rows[0].created_by == alice and "Rules" in rows[0].reason
    assert Preset.objects.get(pk=tavern.pk).version == 3


@pytest.mark.django_db(transaction=True)  # the cache is invalidated when the edit commits
def test_an_edit_changes_the_assembled_prompt_and_a_rollback_undoes_it(tavern, alice, lantern):
    assert "No fighting in the tavern." in assembled_text(lantern.id)
    edit_services.node_update(
        preset=tavern,
        node_id=node(tavern, "rules").pk,
        values={"content": "Duels are settled with riddles."},
        base_version=tavern.version,
        by=alice,
    )
    edited = assembled_text(lantern.id)
    assert "Duels are settled with riddles." in edited and "No fighting" not in edited

    result = edit_services.preset_rollback(preset=tavern, to=1, by=alice)
    restored = assembled_text(lantern.id)
    assert "No fighting in the tavern." in restored and "Duels are settled with riddles." not in restored
    assert result.version == 3 and PresetVersion.objects.get(preset=tavern, number=3).kind == "rollback"
    assert versions.diff(tavern, 1, 3).is_empty


def test_the_diff_names_added_removed_moved_changed_and_toggled_nodes(tavern, alice):
    base = tavern.version
    edit_services.node_move(
        preset=tavern, node_id=node(tavern, "secret").pk, steps=-3, base_version=None, by=alice
    )
    edit_services.node_delete(preset=tavern, node_id=node(tavern, "greet").pk, base_version=None, by=alice)
    edit_services.node_add(
        preset=tavern,
        values={"name": "Toast", "content": "Raise a glass."},
        after_id=None,
        base_version=None,
        by=alice,
    )
    edit_services.node_update(
        preset=tavern,
        node_id=node(tavern, "rules").pk,
        values={"content": "No fighting at all in the tavern."},
        base_version=None,
        by=alice,
    )
    services.node_set_enabled(node=node(tavern, "main"), enabled=False, by=alice)
    services.preset_set_injection_style(preset=tavern, style="standalone", by=alice)

    diff = versions.diff(tavern, base, tavern.version)
    toast = node(tavern, "main").preset.nodes.get(name="Toast").identifier
    assert diff.to_dict() == {
        "added": [toast],
        "removed": ["greet"],
        "moved": ["secret"],
        "changed": ["rules"],
        "toggled": ["main"],
        "settings": ["injection_style"],
    }
    [change] = diff.changes
    inserted = "".join(op.text for op in change.text if op.op == "insert")
    assert inserted.strip() == "at all"  # a word-level diff, not the whole text again


def test_rollback_restores_order_toggles_texts_and_settings_and_keeps_the_versions_between(tavern, alice):
    services.preset_set_injection_style(preset=tavern, style="standalone", by=alice)
    edit_services.node_delete(preset=tavern, node_id=node(tavern, "greet").pk, base_version=None, by=alice)
    services.nodes_set_enabled(preset=tavern, node_ids=[node(tavern, "secret").pk], enabled=True, by=alice)
    edit_services.preset_rollback(preset=tavern, to=1, by=alice)
    tavern.refresh_from_db()
    assert order(tavern) == ["main", "greet", "rules", "secret", "charDescription", "chatHistory"]
    assert not node(tavern, "secret").enabled and tavern.injection_style == "merge"
    assert [v.number for v in versions.versions_of(tavern)] == [5, 4, 3, 2, 1]


@needs_corpus
def test_a_downloaded_edited_version_re_imports_with_identical_nodes(lantern, alice):
    path = CORPUS / "pm" / "marinara-spaghetti-recipe-essentials.json"
    preset = services.preset_import(
        server=lantern, raw=path.read_bytes(), filename=path.name, by=alice
    ).preset
    content = preset.nodes.filter(kind="content").order_by("position")
    first, last = present(content.first()), present(content.last())
    edit_services.node_update(
        preset=preset,
        node_id=first.pk,
        values={
            "content": "Edited <b>text</b> {{char}}.",
            "role": "user",
            "injection_trigger": ["normal", "swipe"],
        },
        base_version=None,
        by=alice,
    )
    edit_services.node_move(preset=preset, node_id=last.pk, steps=-2, base_version=None, by=alice)
    edit_services.node_duplicate(preset=preset, node_id=first.pk, base_version=None, by=alice)
    services.node_set_enabled(node=preset.nodes.get(pk=last.pk), enabled=not last.enabled, by=alice)

    text = versions.export_version(preset, Preset.objects.get(pk=preset.pk).version)
    again = services.preset_import(server=lantern, raw=text.encode(), filename="again.json", by=alice).preset
    fields = (
        "identifier",
        "name",
        "kind",
        "role",
        "content",
        "enabled",
        "injection_position",
        "injection_depth",
        "injection_order",
        "injection_trigger",
        "forbid_overrides",
    )
    assert list(again.nodes.order_by("position").values_list(*fields)) == list(
        preset.nodes.order_by("position").values_list(*fields)
    )
    exported = json.loads(text)
    assert exported["temperature"] == json.loads(path.read_bytes())["temperature"]  # the rest rides along


def test_an_old_version_downloads_as_it_was(tavern, alice):
    edit_services.node_update(
        preset=tavern,
        node_id=node(tavern, "greet").pk,
        values={"content": "Nod."},
        base_version=None,
        by=alice,
    )
    first = json.loads(versions.export_version(tavern, 1))
    greet = next(p for p in first["prompts"] if p["identifier"] == "greet")
    assert greet["content"] == "Greet every guest warmly."
    secret = next(e for e in first["prompt_order"][-1]["order"] if e["identifier"] == "secret")
    assert secret == {"identifier": "secret", "enabled": False}


def test_a_replace_keeps_the_history_and_carries_the_toggles_over(tavern, lantern, alice):
    services.node_set_enabled(node=node(tavern, "rules"), enabled=False, by=alice)
    raw = make_preset(
        ("greet", "Greet guests.", True), ("rules", "No fighting.", True), ("toast", "Cheers.", True)
    )
    result = services.preset_import(
        server=lantern, raw=raw, filename="Tavern.json", on_clash="replace", by=alice
    )
    preset = result.preset
    assert [(v.number, v.kind) for v in versions.versions_of(preset)] == [
        (3, "replace"),
        (2, "toggle"),
        (1, "import"),
    ]
    # the admin's choice carried over (docs/import.md#the-import-summary)
    assert not node(preset, "rules").enabled
    diff = versions.diff(preset, 2, 3)
    assert (
        diff.added == ("toast",) and diff.removed == ("secret",) and set(diff.changed) == {"greet", "rules"}
    )


@needs_corpus
def test_the_nemoengine_8_2_to_v10_diff_names_the_nodes_each_side_has(lantern, alice):
    old, new = CORPUS / "pm" / "nemoengine-8.2.json", CORPUS / "pm" / "nemoengine-v10.json"
    services.preset_import(server=lantern, raw=old.read_bytes(), filename="NemoEngine.json", by=alice)
    preset = services.preset_import(
        server=lantern, raw=new.read_bytes(), filename="NemoEngine.json", on_clash="replace", by=alice
    ).preset
    diff = versions.diff(preset, 1, 2)
    before, after = versions.version_state(preset, 1), versions.version_state(preset, 2)
    old_ids = {n.identifier for n in before.nodes}
    new_ids = {n.identifier for n in after.nodes}
    assert set(diff.added) == new_ids - old_ids and diff.added
    assert set(diff.removed) == old_ids - new_ids and diff.removed
    assert set(diff.changed) <= old_ids & new_ids and diff.changed
    # every node of each side is accounted for: added or shared on the new side, removed or shared on the old
    assert set(diff.added) | (old_ids & new_ids) == new_ids
    raw_new = json.loads(new.read_bytes())
    raw_names = {p["identifier"] for p in raw_new["prompts"]}
    assert set(diff.added) <= raw_names


@needs_corpus
def test_storage_stays_small_when_a_toggle_adds_a_version(lantern, alice):
    path = CORPUS / "pm" / "nemoengine-v10.json"
    preset = services.preset_import(
        server=lantern, raw=path.read_bytes(), filename=path.name, by=alice
    ).preset
    from presets.models import PresetNodeBlob

    blobs = PresetNodeBlob.objects.filter(preset=preset).count()
    services.node_set_enabled(
        node=present(preset.nodes.filter(kind="content").first()), enabled=False, by=alice
    )
    assert PresetNodeBlob.objects.filter(preset=preset).count() == blobs  # nodes are shared, not copied
    newest = PresetVersion.objects.get(preset=preset, number=2)
    assert len(newest.manifest) < 4096 and newest.source is None


def test_a_replace_review_shows_what_the_upload_would_change_and_writes_nothing(tavern, alice):
    from presets.replace_review import review_replace

    services.node_set_enabled(node=node(tavern, "rules"), enabled=False, by=alice)
    raw = make_preset(("greet", "Greet guests.", True), ("rules", "No fighting in the tavern.", True))
    review = review_replace(preset=Preset.objects.get(pk=tavern.pk), raw=raw, filename="Tavern.json")
    assert review.diff.removed == ("secret",) and review.diff.changed == ("greet",)
    assert review.diff.toggled == ()  # rules stays off: the admin's choice carries over
    assert review.carried_over == 4  # main, greet, rules, charDescription (chatHistory is not switchable)
    assert [v.number for v in versions.versions_of(tavern)] == [2, 1]
