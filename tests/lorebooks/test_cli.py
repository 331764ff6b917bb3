"""`manage.py lorebook import|list|settings`: the JSON keys, exit codes and the one-line `error:` contract."""

from __future__ import annotations

import json
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from lorebooks.models import Lorebook, LorebookEntry
from servers.models import AuditEvent
from tests.corpus import CORPUS

pytestmark = pytest.mark.django_db
corpus_only = pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpus is not on this machine")


def run(*args: str) -> tuple[int, Any, str]:  # the parsed JSON report (None without one)
    out, err = StringIO(), StringIO()
    real_stderr = sys.stderr
    sys.stderr = err
    try:
        call_command("lorebook", *args, stdout=out)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.stderr = real_stderr
    text = out.getvalue().strip()
    return code, json.loads(text) if text else None, err.getvalue()


@pytest.fixture
def lore_file(tmp_path) -> Path:
    path = tmp_path / "Harbor Lore.json"
    path.write_text(
        json.dumps(
            {
                "entries": {
                    "0": {"key": ["harbor"], "content": "Ships.", "position": 4},
                    "1": {"key": ["/tide+/i"], "content": "Water.", "constant": True},
                    "2": {"key": ["bell"], "content": "Ding.", "disable": True, "position": 4},
                }
            }
        )
    )
    return path


def test_import_prints_the_summary_with_the_contract_keys(lore_file: Path) -> None:
    code, report, err = run("import", str(lore_file), "--server", "77", "--json")
    assert code == 0, err
    assert report["name"] == "Harbor Lore"
    assert (report["entries"], report["enabled"], report["constant"]) == (3, 2, 1)
    assert report["positions"] == {"0": 1, "4": 2}
    assert report["regex_keys"] == 1 and report["warnings"] == []
    lorebook = Lorebook.objects.get(server_id=77)
    assert lorebook.is_active and lorebook.entries.count() == 3
    assert json.loads(lorebook.original_text) == json.loads(lore_file.read_text())
    assert AuditEvent.objects.filter(action="lorebook.import").count() == 1


def test_a_name_clash_is_refused_unless_replace_or_keep_both(lore_file: Path) -> None:
    run("import", str(lore_file), "--server", "77", "--json")
    code, report, err = run("import", str(lore_file), "--server", "77", "--json")
    assert code == 2 and report is None
    assert err.startswith("error: ") and err.count("\n") == 1
    assert (
        run("import", str(lore_file), "--server", "77", "--keep-both", "--json")[1]["name"]
        == "Harbor Lore (2)"
    )
    replaced = run(
        "import", str(lore_file), "--server", "77", "--replace", "--name", "Harbor Lore", "--json"
    )[1]
    assert replaced["replaced"] is True
    assert Lorebook.objects.filter(server_id=77).count() == 2


def test_no_activate_stores_an_inactive_lorebook(lore_file: Path) -> None:
    run("import", str(lore_file), "--server", "77", "--no-activate", "--json")
    assert Lorebook.objects.get(server_id=77).is_active is False


@corpus_only
def test_a_preset_is_refused_with_exit_2_and_one_sentence_saying_it_is_a_preset() -> None:
    preset = sorted((CORPUS / "pm").glob("*.json"))[0]
    code, report, err = run("import", str(preset), "--server", "77", "--json")
    assert code == 2 and report is None
    assert "preset" in err and err.count("\n") == 1
    assert not Lorebook.objects.exists()


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b'{"entries": {"0": {"content": "' + b"x" * (5 * 1024 * 1024 + 10) + b'"}}}')
    code, _, err = run("import", str(path), "--server", "77", "--json")
    assert code == 2 and "(5.0 MiB) limit for a lorebook" in err
    assert not LorebookEntry.objects.exists()


def test_list_shows_the_servers_lorebooks(lore_file: Path) -> None:
    run("import", str(lore_file), "--server", "77", "--json")
    code, report, _ = run("list", "--server", "77", "--json")
    assert code == 0
    assert [(b["name"], b["active"], b["entries"]) for b in report["lorebooks"]] == [("Harbor Lore", True, 3)]


def test_settings_change_only_what_is_given_and_refuse_bad_values() -> None:
    code, report, _ = run("settings", "--server", "77", "--json")
    assert code == 0 and report["settings"]["scan_depth"] == 2 and report["settings"]["recursive"] is True
    code, report, _ = run(
        "settings",
        "--server",
        "77",
        "--scan-depth",
        "5",
        "--whole-words",
        "off",
        "--strategy",
        "evenly",
        "--json",
    )
    assert report["settings"]["scan_depth"] == 5
    assert report["settings"]["match_whole_words"] is False and report["settings"]["strategy"] == "evenly"
    assert report["settings"]["budget_percent"] == 25
    code, _, err = run("settings", "--server", "77", "--budget-percent", "400", "--json")
    assert code == 2 and "budget percentage" in err


@corpus_only
def test_every_corpus_lorebook_imports_through_the_cli() -> None:
    for path in sorted((CORPUS / "worldinfo").glob("*.json")):
        code, report, err = run("import", str(path), "--server", "78", "--json")
        assert code == 0, err
        raw = json.loads(path.read_text(encoding="utf-8"))["entries"]
        assert report["entries"] == len(raw)
