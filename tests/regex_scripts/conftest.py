"""Shared helpers for the regex tests: a preset file shipping scripts, and the CLI run in-process."""

from __future__ import annotations

import io
import json
import sys
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from presets import services as preset_services
from tests.presets.conftest import make_preset


def script(find: str, replace: str = "", **fields: Any) -> dict[str, Any]:
    """A SillyTavern script object; the id and name default to the pattern."""
    return {
        "id": fields.pop("id", find),
        "scriptName": fields.pop("name", find),
        "findRegex": find,
        "replaceString": replace,
        "placement": fields.pop("placement", [2]),
        **fields,
    }


def preset_with_scripts(*scripts: dict[str, Any], **top: Any) -> bytes:
    return make_preset(("style", "Write well.", True), extensions={"regex_scripts": list(scripts)}, **top)


@pytest.fixture
def import_preset(lantern, alice):
    def importing(name: str, *scripts: dict[str, Any], activate: bool = True, **top: Any):
        return preset_services.preset_import(
            server=lantern,
            raw=preset_with_scripts(*scripts, **top),
            filename=f"{name}.json",
            by=alice,
            activate=activate,
        ).preset

    return importing


def run_cli(
    *args: str, stdin: bytes = b""
) -> tuple[int, Any, str]:  # the parsed JSON report (None without one)
    """`manage.py regex …` in-process; returns (exit code, parsed stdout JSON or None, stderr)."""
    out, err = StringIO(), StringIO()
    real_stdin, real_stderr = sys.stdin, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stderr = err
    try:
        call_command("regex", *args, stdout=out)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.stdin, sys.stderr = real_stdin, real_stderr
    text = out.getvalue().strip()
    return code, json.loads(text) if text else None, err.getvalue()
