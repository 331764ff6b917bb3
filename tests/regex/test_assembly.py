"""Prompt scripts in assembly (SPEC §9.2): promptOnly scripts rewrite history messages by placement
and depth, record themselves in `transforms`, and never touch preset or server text."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from tests.regex.conftest import script

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
