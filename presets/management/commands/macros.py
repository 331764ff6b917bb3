"""`python manage.py macros render [--seed N] [--vars JSON] [--names JSON]`: render stdin with the macro engine."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from engine.macros import render_text, resolve_identity, unescape_braces


class Command(BaseCommand):
    help = "Render the text on stdin with the macro engine and print {text, variables, warnings} as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["render"])
        parser.add_argument("--seed", default="0", help="seed for random and roll, an integer (default 0)")
        parser.add_argument("--vars", default=None, help="starting variables, a JSON object")
        parser.add_argument(
            "--names", default=None, help='{"user": ..., "char": ...}: resolve identity macros'
        )

    def handle(self, *args: Any, **options: Any) -> None:
        for stream in (sys.stdin, sys.stdout):  # preset text is UTF-8 whatever the locale says
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(encoding="utf-8")
        try:
            seed = int(options["seed"])
        except ValueError:
            _fail(f"--seed must be an integer, not {options['seed']!r}.")
        variables = _json_object(options["vars"], "--vars")
        names = _json_object(options["names"], "--names")
        if names is not None and not all(isinstance(names.get(key, ""), str) for key in ("user", "char")):
            _fail('--names must map "user" and "char" to strings.')
        output = render_text(sys.stdin.read(), seed=seed, variables=variables)
        text = output.text
        if names is not None:
            text = resolve_identity(text, user=names.get("user", ""), char=names.get("char", ""), seed=seed)
        else:
            text = unescape_braces(text)  # the final pass of docs/macros.md#macros-20; identity macros stay
        warnings = list(output.warnings)
        if output.unknown_macros:
            warnings.append(f"Unknown macros were left verbatim: {', '.join(sorted(output.unknown_macros))}.")
        result = {"text": text, "variables": output.variables, "warnings": warnings}
        self.stdout.write(json.dumps(result, ensure_ascii=False))


def _json_object(raw: str | None, option: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError as error:
        _fail(f"{option} is not valid JSON ({error}).")
    if not isinstance(value, dict):
        _fail(f"{option} must be a JSON object.")
    return value


def _fail(message: str) -> None:
    sys.stderr.write(f"error: {message}\n")
    sys.exit(2)
