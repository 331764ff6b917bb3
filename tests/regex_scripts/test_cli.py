"""`manage.py regex apply|import|list`: the JSON contract, exit codes, and what the scripts do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from regex_scripts.models import ServerScript
from servers.models import AuditEvent
from tests.regex_scripts.conftest import run_cli, script

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
APPLY_KEYS = {"stored", "display", "reasoning", "applied", "errors"}


def test_apply_prints_stored_display_reasoning_applied_and_errors(lantern, import_preset):
    import_preset(
        "Tidy",
        script("/<tracker>[\\s\\S]*?<\\/tracker>/g", "", name="Hide tracker", id="t1", markdownOnly=True),
        script("/ {2,}/g", " ", name="Squash spaces", id="s1"),
    )
    code, out, err = run_cli(
        "apply",
        "--server",
        str(lantern.id),
        "--reply",
        "--json",
        stdin=b"<think>hmm</think>Hi  there<tracker>HP 3</tracker>",
    )
    assert (code, err) == (0, "")
    assert set(out) == APPLY_KEYS
    assert out["stored"] == "Hi there<tracker>HP 3</tracker>"
    assert out["display"] == "Hi there"
    assert out["reasoning"] == "hmm"
    assert out["applied"] == [
        {"script": "Squash spaces", "id": "s1", "where": "stored"},
        {"script": "Hide tracker", "id": "t1", "where": "display"},
    ]
    assert out["errors"] == []


def test_apply_uses_standard_input_exactly_as_given(lantern):
    code, out, _ = run_cli("apply", "--server", str(lantern.id), "--reply", "--json", stdin=b"  keep me \n\n")
    assert code == 0
    assert out["stored"] == out["display"] == "  keep me \n\n"
    assert out["reasoning"] is None


def test_the_servers_own_scripts_run_before_the_presets(lantern, import_preset, tmp_path):
    import_preset("Second", script("/cat/g", "dog", name="preset cat"))
    export = tmp_path / "own.json"
    export.write_text(json.dumps(script("/cat/g", "lion", name="own cat")))
    run_cli("import", str(export), "--server", str(lantern.id), "--json")
    _, out, _ = run_cli("apply", "--server", str(lantern.id), "--reply", "--json", stdin=b"cat")
    assert out["stored"] == "lion"
    assert [a["script"] for a in out["applied"]] == ["own cat"]


def test_a_named_preset_is_used_instead_of_the_active_one(lantern, import_preset):
    import_preset("Active", script("/a/", "ACTIVE"))
    import_preset("Other", script("/a/", "OTHER"), activate=False)
    _, out, _ = run_cli(
        "apply", "--server", str(lantern.id), "--reply", "--preset", "Other", "--json", stdin=b"a"
    )
    assert out["stored"] == "OTHER"


def test_a_user_message_runs_user_input_scripts_only(lantern, import_preset):
    import_preset("Inputs", script("/x/", "USER", placement=[1]), script("/x/", "AI", placement=[2]))
    _, out, _ = run_cli(
        "apply", "--server", str(lantern.id), "--user-message", "--json", stdin=b"x <think>y</think>"
    )
    assert out["stored"] == out["display"] == "USER <think>y</think>"
    assert out["reasoning"] is None


def test_impersonation_cleans_the_reply_with_user_input_scripts(lantern, import_preset):
    import_preset("Inputs", script("/x/", "USER", placement=[1]), script("/x/", "AI", placement=[2]))
    _, out, _ = run_cli(
        "apply", "--server", str(lantern.id), "--reply", "--impersonate", "--json", stdin=b"x"
    )
    assert out["stored"] == "USER"


def test_the_seed_makes_a_random_replacement_repeatable(lantern, import_preset):
    import_preset("Dice", script("/sigh/", "{{random::a::b::c::d::e::f::g::h}}"))
    runs = [
        run_cli("apply", "--server", str(lantern.id), "--reply", "--seed", "5", "--json", stdin=b"sigh")[1][
            "stored"
        ]
        for _ in range(3)
    ]
    assert len(set(runs)) == 1 and runs[0] in "abcdefgh"


def test_a_stopped_script_is_listed_in_errors_and_leaves_the_text(lantern, import_preset):
    import_preset("Slow", script("/(a+)+$/", "Z", name="Backtracker"))
    text = b"a" * 60 + b"!"
    _, out, _ = run_cli("apply", "--server", str(lantern.id), "--reply", "--json", stdin=text)
    assert out["stored"] == text.decode()
    assert out["errors"][0]["script"] == "Backtracker"
    assert "50 ms" in out["errors"][0]["error"]


def test_import_reports_the_count_and_the_inactive_scripts_with_reasons(lantern, tmp_path):
    export = tmp_path / "export.json"
    export.write_text(json.dumps([script("/ok/g", "fine"), script("/(?<bad/g", name="Broken")]))
    code, out, err = run_cli("import", str(export), "--server", str(lantern.id), "--json")
    assert (code, err) == (0, "")
    assert out["scripts"] == 2
    assert [i["script"] for i in out["inactive"]] == ["Broken"]
    assert "Not a valid JavaScript regular expression" in out["inactive"][0]["reason"]
    assert ServerScript.objects.filter(server=lantern).count() == 2
    assert AuditEvent.objects.filter(server=lantern, action="regex.import", actor_label="cli").exists()


def test_import_accepts_a_single_script_object(lantern, tmp_path):
    export = tmp_path / "one.json"
    export.write_text(json.dumps(script("/one/")))
    assert run_cli("import", str(export), "--server", str(lantern.id), "--json")[1] == {
        "scripts": 1,
        "inactive": [],
    }


def test_import_refuses_a_file_that_is_not_an_export_with_one_line(lantern, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('"just a string"')
    code, out, err = run_cli("import", str(bad), "--server", str(lantern.id), "--json")
    assert code == 2 and out is None
    assert err.startswith("error: ") and err.count("\n") == 1
    assert not ServerScript.objects.exists()


def test_list_shows_the_servers_scripts_then_the_active_presets(lantern, import_preset, tmp_path):
    import_preset("Listed", script("/p/gi", name="from preset", minDepth=1, maxDepth=3))
    export = tmp_path / "own.json"
    export.write_text(json.dumps(script("/o/", name="own")))
    run_cli("import", str(export), "--server", str(lantern.id), "--json")
    _, out, _ = run_cli("list", "--server", str(lantern.id), "--json")
    assert [(s["source"], s["script"]) for s in out["scripts"]] == [
        ("server", "own"),
        ("preset", "from preset"),
    ]
    listed = out["scripts"][1]
    assert (listed["pattern"], listed["flags"], listed["minDepth"], listed["maxDepth"]) == ("p", "gi", 1, 3)
    assert listed["active"] is True and listed["preset"] == "Listed"


def test_an_unknown_server_or_preset_is_one_error_line_and_exit_2(lantern):
    code, _, err = run_cli("apply", "--server", "424242", "--reply", "--json")
    assert code == 2 and err.startswith("error: ")
    code, _, err = run_cli("apply", "--server", str(lantern.id), "--reply", "--preset", "Nope", "--json")
    assert code == 2 and "Nope" in err


@pytest.mark.django_db(transaction=True)
def test_the_real_command_line_reads_stdin_bytes_untouched_and_needs_reply_or_user_message(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite3'}"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from servers.models import Server; Server.objects.create(id=9, name='n')",
        ],
        cwd=ROOT,
        env=env,
        check=True,
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "regex", "apply", "--server", "9", "--reply", "--json"],
        cwd=ROOT,
        env=env,
        input="\r\n <think> a </think>\n\nrest é \n".encode(),
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["stored"], out["reasoning"]) == ("rest é \n", "a")
    missing = subprocess.run(
        [sys.executable, "manage.py", "regex", "apply", "--server", "9", "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=False,
    )
    assert missing.returncode == 2
    assert missing.stderr.decode().startswith("error: ") and missing.stderr.count(b"\n") == 1
