"""`python manage.py macros render`: stdin in, one JSON object out, exit 2 on bad options."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def run(text: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "macros", "render", *options],
        input=text,
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_render_prints_text_variables_and_warnings_as_one_json_object() -> None:
    result = run("{{getvar::mood}}{{setvar::mood::calm}} {{addvar::n::2}}{{roll:1d0}}", "--vars", '{"n": 5}')
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert set(output) == {"text", "variables", "warnings"}
    # the read comes before the write (one pass, docs/assembly.md#what-sillytavern-118-corrected)
    assert output["text"] == " "
    assert output["variables"] == {"n": 7, "mood": "calm"}
    assert len(output["warnings"]) == 1


def test_render_leaves_identity_macros_without_names_and_resolves_them_with_names() -> None:
    text = "{{user}} meets {{char}} — é"
    assert json.loads(run(text).stdout)["text"] == text
    named = run(text, "--names", '{"user": "Ann", "char": "Lantern"}')
    assert json.loads(named.stdout)["text"] == "Ann meets Lantern — é"
    assert "é" in named.stdout  # not escaped


def test_render_with_the_same_seed_gives_the_same_text() -> None:
    text = "{{roll:3d30+120}} {{random::a::b::c::d::e}}"
    first, second = run(text, "--seed", "42"), run(text, "--seed", "42")
    assert json.loads(first.stdout)["text"] == json.loads(second.stdout)["text"]


@pytest.mark.parametrize(("option", "value"), [("--vars", "{bad"), ("--vars", "[1, 2]"), ("--names", "nope")])
def test_bad_json_in_an_option_exits_2_with_one_error_line(option: str, value: str) -> None:
    result = run("hi", option, value)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert result.stdout == ""


def test_a_seed_that_is_not_an_integer_exits_2_with_one_error_line() -> None:
    result = run("hi", "--seed", "soon")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["error: --seed must be an integer, not 'soon'."]


def test_render_supports_macros_2_and_prints_escaped_braces_without_their_backslash() -> None:
    text = "{{if .ready}}\n  Go, {{.name}}!\n{{else}}Wait.{{/if}} \\{{not a macro\\}} {{.n++}}"
    result = run(text, "--vars", '{"ready": "yes", "name": "Ann", "n": 1}')
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert output["text"] == "Go, Ann! {{not a macro}} 2"
    assert output["variables"] == {"ready": "yes", "name": "Ann", "n": 2}
