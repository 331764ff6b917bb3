"""`manage.py assemble` keeps its contract: one JSON object, or exit 2 with one `error:` line."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command

from assembly.management.commands.assemble import Command
from core.actors import Agent

DEFAULT = "assembly/default_buckets.json"


def run(*args: str) -> tuple[int, Any, str]:  # the parsed JSON report (None without one)
    out, err = io.StringIO(), io.StringIO()
    code = 0
    import sys

    real_err = sys.stderr
    sys.stderr = err
    try:
        call_command(Command(), *args, stdout=out)
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.stderr = real_err
    text = out.getvalue()
    return code, (json.loads(text) if text.strip() else None), err.getvalue()


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).resolve().parents[2])


def test_the_command_prints_the_contracts_json(lantern):
    code, body, _ = run("--server", "1001", "--buckets", DEFAULT, "--json")
    assert code == 0
    for key in ("messages", "warnings", "omitted", "variables", "global_variables", "seed", "tokens"):
        assert key in body
    assert body["seed"] == 42
    assert set(body["tokens"]) >= {"total", "per_message"}
    assert body["messages"][0]["sources"] == [{"kind": "native", "tag": "SYSTEM_HUMANIZER_RULES"}]


def test_the_active_preset_is_used_and_native_ignores_it(lantern, stored_preset):
    _, with_preset, _ = run("--server", "1001", "--buckets", DEFAULT, "--json")
    _, native, _ = run("--server", "1001", "--buckets", DEFAULT, "--native", "--json")
    assert with_preset["preset"] == "tiny-xss" and native["mode"] == "native"


def test_a_preset_can_be_picked_by_name(lantern, stored_preset, alice):
    from presets.services import preset_deactivate

    preset_deactivate(preset=stored_preset, by=alice)
    _, body, _ = run("--server", "1001", "--buckets", DEFAULT, "--preset", "tiny-xss", "--json")
    assert body["preset"] == "tiny-xss"


def test_provider_style_and_seed_are_honoured(lantern):
    _, body, _ = run(
        "--server",
        "1001",
        "--buckets",
        DEFAULT,
        "--provider",
        "anthropic",
        "--style",
        "standalone",
        "--seed",
        "9",
        "--json",
    )
    assert body["seed"] == 9 and body["style"] == "standalone"
    assert body["provider_payload"]["system"]
    assert body["messages"][0]["role"] == "system"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--server", "999", "--buckets", DEFAULT), "no server"),
        (("--server", "1001", "--buckets", "/nonexistent.json"), "cannot read"),
        (("--server", "1001", "--buckets", "pyproject.toml"), "not valid JSON"),
        (("--server", "1001", "--buckets", DEFAULT, "--preset", "nope"), "no preset"),
        (("--server", "1001", "--buckets", DEFAULT, "--provider", "cohere"), "invalid choice"),
    ],
)
def test_errors_exit_2_with_one_error_line(lantern, args, needle):
    code, body, err = run(*args, "--json")
    assert code == 2 and body is None
    assert err.startswith("error: ") and err.count("\n") == 1
    assert needle in err


def test_a_bad_bucket_document_exits_2(lantern, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"history": [{"role": "narrator"}]}))
    code, _, err = run("--server", "1001", "--buckets", str(bad), "--json")
    assert code == 2 and err.startswith("error: `history[0].role`")


def test_the_real_command_fails_with_one_error_line_and_never_a_traceback(lantern, tmp_path, settings):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    bad = tmp_path / "bad.json"
    bad.write_text('{"names": {"user": 5}}')
    done = subprocess.run(
        [sys.executable, "manage.py", "assemble", "--server", "1", "--buckets", str(bad), "--json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_non_ascii_text_is_printed_as_is(lantern, tmp_path):
    doc = tmp_path / "cafe.json"
    doc.write_text(
        json.dumps({"history": [{"role": "user", "name": "Zoë", "content": "旅の酒場へようこそ"}]}),
        encoding="utf-8",
    )
    out = io.StringIO()
    call_command(Command(), "--server", "1001", "--buckets", str(doc), "--json", stdout=out)
    assert "Zoë: 旅の酒場へようこそ" in out.getvalue()


PREFILL_PRESET = {
    "prompts": [
        {"identifier": "main", "name": "Main Prompt", "content": "Main says hi.", "role": "system"},
        {
            "identifier": "regen",
            "name": "On regenerate",
            "content": "Try anew.",
            "injection_trigger": ["regenerate"],
        },
        {"identifier": "chatHistory", "name": "Chat History", "marker": True},
    ],
    "prompt_order": [
        {
            "character_id": 100001,
            "order": [{"identifier": i, "enabled": True} for i in ("main", "regen", "chatHistory")],
        }
    ],
    "assistant_prefill": "{{char}} answers:",
}


def test_the_generation_type_and_the_anthropic_prefill_apply_from_the_command_line(lantern, tmp_path):
    from presets.services import preset_import

    preset_import(
        server=lantern,
        raw=json.dumps(PREFILL_PRESET).encode(),
        filename="prefill.json",
        by=Agent("test"),
    )
    doc = {
        "names": {"user": "Ann", "char": "Lantern"},
        "history": [
            {"role": "user", "name": "Ann", "content": "Hello?"},
            {"role": "assistant", "name": "Lantern", "content": "A reply being replaced."},
        ],
    }
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    args = ("--server", "1001", "--buckets", str(path), "--provider", "anthropic", "--json")
    code, body, err = run(*args[:4], "--generation-type", "regenerate", *args[4:])
    assert code == 0, err
    contents = [m["content"] for m in body["messages"]]
    assert "Try anew." in contents and "A reply being replaced." not in contents
    assert body["messages"][-1] == {
        "role": "assistant",
        "content": "Lantern answers:",
        "sources": [{"kind": "preset_setting", "name": "assistant_prefill"}],
    }
    assert body["provider_payload"]["messages"][-1] == {"role": "assistant", "content": "Lantern answers:"}
    _, normal, _ = run(*args)
    assert "Try anew." not in [m["content"] for m in normal["messages"]]
    code, _, err = run(*args[:4], "--generation-type", "rewrite", *args[4:])
    assert code == 2 and err.startswith("error:")
