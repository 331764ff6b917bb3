"""`manage.py preset import|list`: the JSON keys, exit codes and the one-line `error:` contract."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from devtools.factories import make_preset
from presets.models import Preset
from servers.models import AuditEvent, Server
from tests.corpus import CORPUS, needs_corpus

pytestmark = pytest.mark.django_db

IMPORT_KEYS = {
    "preset_id",
    "name",
    "shape",
    "nodes",
    "markers",
    "content",
    "comments",
    "toggleable",
    "enabled",
    "depth_injections",
    "not_in_order",
    "warnings",
}
ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[int, Any, str]:  # the parsed JSON report (None without one)
    """Call the command in-process; returns (exit code, parsed stdout JSON or None, stderr)."""
    out, err = StringIO(), StringIO()
    real_stderr = sys.stderr
    sys.stderr = err
    try:
        call_command("preset", *args, stdout=out)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.stderr = real_stderr
    text = out.getvalue().strip()
    return code, json.loads(text) if text else None, err.getvalue()


@pytest.fixture
def preset_file(tmp_path) -> Path:
    path = tmp_path / "Quiet Evening.json"
    path.write_bytes(make_preset(("calm", "Speak softly.", True), ("loud", "SHOUT.", False)))
    return path


def test_import_prints_the_summary_keys_and_creates_the_server(preset_file):
    code, report, err = run("import", str(preset_file), "--server", "777", "--json")
    assert code == 0 and err == ""
    assert set(report) >= IMPORT_KEYS
    assert report["name"] == "Quiet Evening" and report["shape"] == "prompt_manager"
    assert report["nodes"] == 5 and report["enabled"] == 3 and isinstance(report["warnings"], list)
    assert Server.objects.filter(pk=777).exists()
    assert Preset.objects.get(pk=report["preset_id"]).is_active


def test_import_is_audited_as_the_cli(preset_file, lantern):
    run("import", str(preset_file), "--server", str(lantern.id), "--json")
    assert AuditEvent.objects.filter(server=lantern, action="preset.import", actor_label="cli").exists()


def test_a_refused_file_exits_2_with_one_error_line(tmp_path, lantern):
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"spec": "chara_card_v3", "data": {"first_mes": "hello"}}))
    code, report, err = run("import", str(card), "--server", str(lantern.id), "--json")
    assert code == 2 and report is None
    assert err.startswith("error: ") and err.count("\n") == 1
    assert not Preset.objects.exists()


def test_a_name_clash_without_a_choice_exits_2(preset_file, lantern):
    run("import", str(preset_file), "--server", str(lantern.id), "--json")
    code, _, err = run("import", str(preset_file), "--server", str(lantern.id), "--json")
    assert code == 2 and err.startswith("error: ") and "--replace" in err
    assert Preset.objects.filter(server=lantern).count() == 1


def test_replace_and_keep_both_resolve_a_clash(preset_file, lantern):
    _, first, _ = run("import", str(preset_file), "--server", str(lantern.id), "--json")
    _, replaced, _ = run("import", str(preset_file), "--server", str(lantern.id), "--replace", "--json")
    _, kept, _ = run("import", str(preset_file), "--server", str(lantern.id), "--keep-both", "--json")
    assert replaced["replaced"] and replaced["preset_id"] != first["preset_id"] and replaced["active"]
    assert kept["name"] == "Quiet Evening (2)"


def test_no_activate_stores_the_preset_inactive(preset_file, lantern):
    _, report, _ = run("import", str(preset_file), "--server", str(lantern.id), "--no-activate", "--json")
    assert report["active"] is False


def test_a_missing_file_exits_2_with_an_error_line(tmp_path, lantern):
    code, _, err = run("import", str(tmp_path / "nope.json"), "--server", str(lantern.id), "--json")
    assert code == 2 and err.startswith("error: ") and "nope.json" in err


def test_list_prints_each_preset_with_its_state(preset_file, lantern):
    run("import", str(preset_file), "--server", str(lantern.id), "--json")
    run("import", str(preset_file), "--server", str(lantern.id), "--keep-both", "--no-activate", "--json")
    code, listing, _ = run("list", "--server", str(lantern.id), "--json")
    assert code == 0
    rows = {row["name"]: row for row in listing["presets"]}
    assert set(rows) == {"Quiet Evening", "Quiet Evening (2)"}
    assert rows["Quiet Evening"]["active"] and not rows["Quiet Evening (2)"]["active"]
    assert {"preset_id", "name", "active", "shape", "nodes"} <= set(rows["Quiet Evening"])


def test_names_are_printed_as_written_not_escaped(tmp_path, lantern):
    path = tmp_path / "小狗预设.json"
    path.write_bytes(make_preset(("x", "x", True)))
    out = StringIO()
    call_command("preset", "import", str(path), "--server", str(lantern.id), "--json", stdout=out)
    assert "小狗预设" in out.getvalue()


@pytest.fixture(scope="module")
def migrated_sqlite(tmp_path_factory) -> dict[str, str]:
    """An environment pointing a subprocess at a freshly migrated SQLite database of its own."""
    db = tmp_path_factory.mktemp("cli") / "cli.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["DATABASE_URL"] = f"sqlite:///{db}"
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    return env


@needs_corpus
def test_the_real_command_line_exits_0_then_2_on_a_corpus_world_info_file(migrated_sqlite):
    def cli(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "manage.py", "preset", *args]
        return subprocess.run(
            command, cwd=ROOT, env=migrated_sqlite, capture_output=True, text=True, timeout=120
        )

    ok = cli("import", str(CORPUS / "pm" / "st-openai-Default.json"), "--server", "5", "--json")
    assert ok.returncode == 0, ok.stderr
    assert set(json.loads(ok.stdout)) >= IMPORT_KEYS
    refused = cli("import", str(CORPUS / "worldinfo" / "st-Eldoria-newer.json"), "--server", "5", "--json")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("error: ") and len(refused.stderr.strip().splitlines()) == 1
    assert "Traceback" not in refused.stderr
