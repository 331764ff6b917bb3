"""Prompt scripts in assembly (docs/regex.md#where-they-run): promptOnly scripts rewrite history messages by
placement and depth, record themselves in `transforms`, and never touch preset or server text."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from tests.regex_scripts.conftest import script

pytestmark = pytest.mark.django_db


def document(*history: tuple[str, str]) -> dict:
    return {
        "version": 1,
        "names": {"user": "Ann", "char": "Nemo"},
        "system_prompt": "Server rule: [tracker] stays here.",
        "history": [
            {"role": role, "name": "Ann" if role == "user" else "Nemo", "content": text}
            for role, text in history
        ],
        "seed": 3,
    }


def assemble_json(tmp_path, server_id: int, doc: dict) -> dict:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    out = StringIO()
    call_command("assemble", "--server", str(server_id), "--buckets", str(path), "--json", stdout=out)
    return json.loads(out.getvalue())


HISTORY = (
    ("user", "hello [tracker]"),
    ("assistant", "reply one [tracker]"),
    ("user", "again [tracker]"),
    ("assistant", "reply two [tracker]"),
)


def test_a_prompt_script_rewrites_history_within_its_depth_and_says_so(tmp_path, lantern, import_preset):
    import_preset(
        "Hider",
        script(
            "/ ?\\[tracker\\]/g",
            "",
            name="Hide old trackers",
            id="hide",
            promptOnly=True,
            placement=[1, 2],
            minDepth=1,
        ),
    )
    out = assemble_json(tmp_path, lantern.id, document(*HISTORY))
    history = [m for m in out["messages"] if any(s.get("tag") == "DIALOGUE_HISTORY" for s in m["sources"])]
    assert [m["content"] for m in history] == ["Ann: hello", "reply one", "Ann: again", "reply two [tracker]"]
    assert history[0]["transforms"] == [{"kind": "regex", "script": "Hide old trackers", "id": "hide"}]
    assert "transforms" not in history[-1]
    assert any("Server rule: [tracker] stays here." in m["content"] for m in out["messages"])


def test_placement_decides_which_roles_a_prompt_script_touches(tmp_path, lantern, import_preset):
    import_preset("Users only", script("/\\[tracker\\]/g", "[t]", promptOnly=True, placement=[1]))
    out = assemble_json(tmp_path, lantern.id, document(*HISTORY))
    contents = [m["content"] for m in out["messages"]]
    assert "Ann: hello [t]" in contents and "reply one [tracker]" in contents


def test_scripts_without_prompt_only_do_not_run_at_assembly(tmp_path, lantern, import_preset):
    import_preset(
        "Reply scripts",
        script("/\\[tracker\\]/g", "[stored]"),
        script("/\\[tracker\\]/g", "[display]", markdownOnly=True),
    )
    out = assemble_json(tmp_path, lantern.id, document(*HISTORY))
    assert not any("transforms" in m for m in out["messages"])
    assert "reply two [tracker]" in [m["content"] for m in out["messages"]]


def test_the_preview_shows_which_scripts_changed_a_message(client, bob, lantern, import_preset):
    import_preset(
        "Shown", script("/\\[tracker\\]/g", "", name="Tracker eraser", promptOnly=True, placement=[1, 2])
    )
    client.force_login(bob)
    page = client.post(
        reverse("assembly:preview-render", args=[lantern.id]), {"document": json.dumps(document(*HISTORY))}
    ).content.decode()
    assert "Changed by regex: Tracker eraser" in page
    assert "hello [tracker]" in page  # the text before, on demand


def _lore(lantern, alice) -> None:
    from lorebooks import services as lorebook_services  # only these two tests need a lorebook

    lore = {
        "entries": {"0": {"key": ["tracker"], "content": "Lore: the [tracker] glows.", "comment": "Glow"}}
    }
    lorebook_services.lorebook_import(
        server=lantern, raw=json.dumps(lore).encode(), filename="Lore.json", by=alice
    )


def test_a_world_info_script_names_itself_on_the_entry_it_changed(tmp_path, lantern, alice, import_preset):
    _lore(lantern, alice)
    import_preset(
        "Lore scripts",
        script("/\\[tracker\\]/g", "(t)", id="wi", name="Lore tidy", promptOnly=True, placement=[5]),
    )
    out = assemble_json(tmp_path, lantern.id, document(*HISTORY))
    lore = next(m for m in out["messages"] if "Lore: the (t) glows." in m["content"])
    assert lore["transforms"] == [{"kind": "regex", "script": "Lore tidy", "id": "wi"}]
    assert not any("transforms" in m for m in out["messages"] if m is not lore)  # history is placement 1/2


def test_the_preview_shows_which_script_changed_a_world_info_entry(
    client, bob, lantern, alice, import_preset
):
    _lore(lantern, alice)
    import_preset(
        "Lore scripts", script("/\\[tracker\\]/g", "(t)", name="Lore tidy", promptOnly=True, placement=[5])
    )
    client.force_login(bob)
    page = client.post(
        reverse("assembly:preview-render", args=[lantern.id]), {"document": json.dumps(document(*HISTORY))}
    ).content.decode()
    assert "Changed by regex: Lore tidy" in page
    assert "Lore: the [tracker] glows." in page  # the entry before the script, on demand


def test_world_info_scans_the_history_the_prompt_scripts_rewrote(tmp_path, lantern, alice, import_preset):
    # SillyTavern 1.18 scans the chat it is about to send: a keyword a promptOnly script removed from
    # every message no longer activates its entry (docs/assembly.md#what-sillytavern-118-corrected)
    _lore(lantern, alice)
    import_preset(
        "Tracker hider", script("/ ?\\[tracker\\]/g", "", id="hide", promptOnly=True, placement=[1, 2])
    )
    out = assemble_json(tmp_path, lantern.id, document(*HISTORY))
    assert not any("glows" in m["content"] for m in out["messages"])


def test_an_entry_whose_keyword_survives_the_scripts_still_activates(tmp_path, lantern, alice, import_preset):
    _lore(lantern, alice)
    import_preset("User side only", script("/\\[tracker\\]/g", "", id="u", promptOnly=True, placement=[1]))
    out = assemble_json(tmp_path, lantern.id, document(*HISTORY))
    assert any("Lore: the [tracker] glows." in m["content"] for m in out["messages"])
