"""`manage.py preset sampling --server ID (--use preset|server|merged) [--set NAME=VALUE ...] [--unset NAME ...] --json`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.presets.test_cli import ROOT, migrated_sqlite, run  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


def test_merged_with_server_overrides_shows_the_effective_settings_per_provider(lantern, warm_preset) -> None:
    code, out, err = run(
        "sampling", "--server", str(lantern.id), "--use", "merged", "--set", "temperature=0.8", "openai_max_tokens=600", "--json"
    )  # fmt: skip
    assert code == 0, err
    assert out["mode"] == "merged" and out["effective"]["temperature"] == 0.8
    assert out["effective"]["top_k"] == 40  # the preset's, not overridden
    providers = out["providers"]
    assert providers["openai"]["params"]["temperature"] == 0.8
    assert providers["openai"]["params"]["max_completion_tokens"] == 600
    assert "top_k" in {d["name"] for d in providers["openai"]["dropped"]}
    assert providers["anthropic"]["params"]["top_k"] == 40
    assert providers["gemini"]["params"]["topK"] == 40
    assert providers["gemini"]["params"]["maxOutputTokens"] == 600


def test_server_mode_ignores_the_preset(lantern, warm_preset) -> None:
    code, out, _ = run(
        "sampling", "--server", str(lantern.id), "--use", "server", "--set", "seed=7", "--json"
    )
    assert code == 0 and out["effective"] == {"seed": 7}
    assert out["providers"]["openai"]["params"] == {"seed": 7}
    assert out["providers"]["anthropic"]["params"] == {}


def test_unset_removes_a_server_value(lantern) -> None:
    run("sampling", "--server", str(lantern.id), "--use", "server", "--set", "seed=7", "top_k=5", "--json")
    code, out, _ = run(
        "sampling", "--server", str(lantern.id), "--use", "server", "--unset", "seed", "--json"
    )
    assert code == 0 and out["values"] == {"top_k": 5}


def test_preset_mode_clamps_the_presets_temperature_for_anthropic_and_says_so(lantern, warm_preset) -> None:
    code, out, _ = run("sampling", "--server", str(lantern.id), "--use", "preset", "--json")
    assert code == 0
    anthropic = out["providers"]["anthropic"]
    assert anthropic["params"]["temperature"] == 1
    assert any("temperature 1.3" in note for note in anthropic["adjusted"])


@pytest.mark.parametrize(
    "args",
    [("--set", "temperature=9"), ("--set", "temperature"), ("--unset", "mirostat")],
)
def test_a_bad_argument_is_one_error_line_and_exit_2(lantern, args) -> None:
    code, out, err = run("sampling", "--server", str(lantern.id), *args, "--json")
    assert code == 2 and out is None
    assert err.startswith("error: ") and err.count("\n") == 1


def test_the_real_command_line_sets_the_choice_then_refuses_an_unknown_mode(migrated_sqlite) -> None:  # noqa: F811
    def cli(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "manage.py", "preset", "sampling", "--server", "77", *args, "--json"]
        return subprocess.run(
            command, cwd=ROOT, env=migrated_sqlite, capture_output=True, text=True, timeout=120
        )

    ok = cli("--use", "server", "--set", "temperature=0.5", "top_k=30")
    assert ok.returncode == 0, ok.stderr
    out = json.loads(ok.stdout)
    assert out["providers"]["gemini"]["params"] == {"temperature": 0.5, "topK": 30}
    refused = cli("--use", "loud")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("error: ") and len(refused.stderr.strip().splitlines()) == 1
