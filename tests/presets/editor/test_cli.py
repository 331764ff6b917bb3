"""`manage.py preset versions|diff|rollback|channel` and `assemble --channel`: the exact JSON shapes."""

from __future__ import annotations

import json

import pytest

from presets import services
from presets.editor import services as edit_services
from tests.presets.editor.conftest import node
from tests.presets.test_cli import run

pytestmark = pytest.mark.django_db


def test_versions_lists_every_version_with_its_reason_and_counts(tavern, alice):
    services.node_set_enabled(node=node(tavern, "secret"), enabled=True, by=alice)
    code, report, err = run("versions", "--server", "1001", "--preset", "Tavern", "--json")
    assert code == 0 and err == ""
    assert [set(row) for row in report] == [{"version", "created_at", "reason", "nodes", "enabled"}] * 2
    assert [(row["version"], row["nodes"], row["enabled"]) for row in report] == [(1, 6, 4), (2, 6, 5)]
    assert "Tavern.json" in report[0]["reason"] and "Secret" in report[1]["reason"]


def test_diff_names_the_identifiers_in_each_category(tavern, alice):
    edit_services.node_delete(preset=tavern, node_id=node(tavern, "greet").pk, base_version=None, by=alice)
    services.node_set_enabled(node=node(tavern, "secret"), enabled=True, by=alice)
    code, report, _ = run(
        "diff", "--server", "1001", "--preset", "Tavern", "--from", "1", "--to", "3", "--json"
    )
    assert code == 0
    assert report == {
        "added": [],
        "removed": ["greet"],
        "moved": [],
        "changed": [],
        "toggled": ["secret"],
        "settings": [],
    }


def test_rollback_makes_a_new_version_with_the_old_state(tavern, alice):
    edit_services.node_delete(preset=tavern, node_id=node(tavern, "greet").pk, base_version=None, by=alice)
    code, report, _ = run("rollback", "--server", "1001", "--preset", "Tavern", "--to", "1", "--json")
    assert code == 0 and report["version"] == 3 and report["rolled_back_to"] == 1 and report["nodes"] == 6
    assert tavern.nodes.filter(identifier="greet").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("versions", "--server", "1001", "--preset", "Nope"), "no preset named"),
        (("versions", "--server", "4242", "--preset", "Tavern"), "no server"),
        (("diff", "--server", "1001", "--preset", "Tavern", "--from", "1", "--to", "9"), "no version 9"),
        (("rollback", "--server", "1001", "--preset", "Tavern", "--to", "7"), "no version 7"),
        (("channel", "--server", "1001", "--channel", "5", "--preset", "Nope"), "no preset named"),
    ],
)
def test_a_bad_request_is_one_error_line_and_exit_2(tavern, args, says):
    code, report, err = run(*args, "--json")
    assert code == 2 and report is None
    assert err.startswith("error: ") and says in err and err.count("\n") == 1


def test_channel_sets_and_clears_a_channels_preset(tavern, lantern, alice, tmp_path):
    from django.core.management import call_command

    from tests.presets.conftest import make_preset

    services.preset_import(
        server=lantern,
        raw=make_preset(("quiet", "Whisper only.", True)),
        filename="Library.json",
        activate=False,
        by=alice,
    )
    code, report, _ = run("channel", "--server", "1001", "--channel", "555", "--preset", "Library", "--json")
    assert code == 0 and report["preset"] == "Library" and report["channel"] == 555

    buckets = tmp_path / "doc.json"
    from assembly.selectors import default_document

    buckets.write_text(json.dumps(default_document()))
    for channel, expected in (("555", "Library"), ("556", "Tavern")):
        from io import StringIO

        out = StringIO()
        call_command(
            "assemble",
            "--server",
            "1001",
            "--buckets",
            str(buckets),
            "--channel",
            channel,
            "--json",
            stdout=out,
        )
        assert json.loads(out.getvalue())["preset"] == expected

    code, report, _ = run("channel", "--server", "1001", "--channel", "555", "--clear", "--json")
    assert code == 0 and report["preset"] is None and report["changed"]
