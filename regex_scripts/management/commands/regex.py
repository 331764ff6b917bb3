"""`manage.py regex apply|import|list`: reply cleaning and the server's own scripts, JSON out.

    python manage.py regex apply --server ID (--reply | --user-message) [--preset NAME]
        [--impersonate] [--seed N] --json < text
    python manage.py regex import FILE --server ID --json
    python manage.py regex list --server ID --json

`apply` reads standard input exactly as given (bytes decoded as UTF-8, nothing trimmed) and prints
`{"stored", "display", "reasoning", "applied", "errors"}`. Errors (unknown server or preset, an
unreadable or refused file): exit 2 and one line on stderr starting `error: `; never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from core.actors import CLI
from core.errors import UserError
from core.json_command import JsonCommand, RefusingParser, add_json, add_server
from engine.regex import MAX_EXPORT_BYTES, CleanedJson, read_export
from regex_scripts import selectors, services
from servers.models import Server
from servers.services import server_ensure


class _Failure(UserError):
    """A bad command line or a missing server: shown as the command's one `error:` line."""


class Command(JsonCommand):
    help = "Clean a reply or user message with a server's regex scripts; import or list its scripts."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.error = RefusingParser.error.__get__(parser)  # type: ignore[method-assign]
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, parser_class=RefusingParser)
        applying = actions.add_parser("apply", help="Clean standard input as a reply or a user message.")
        add_server(applying)
        kind = applying.add_mutually_exclusive_group(required=True)
        kind.add_argument("--reply", action="store_true", help="The text is a model reply.")
        kind.add_argument("--user-message", action="store_true", help="The text is a user message.")
        applying.add_argument(
            "--preset", help="Use this stored preset's scripts instead of the active one's."
        )
        applying.add_argument(
            "--impersonate", action="store_true", help="The reply speaks as the user (user-input scripts)."
        )
        applying.add_argument(
            "--seed", type=int, help="The seed for macros in replacements (default: drawn)."
        )
        add_json(applying)
        importing = actions.add_parser("import", help="Add a SillyTavern regex export to the server's list.")
        importing.add_argument("file", help="The export (.json): one script object or a list.")
        add_server(importing)
        add_json(importing)
        listing = actions.add_parser("list", help="List the server's scripts and its active preset's.")
        add_server(listing)
        add_json(listing)

    def run(self, options: dict[str, Any]) -> Any:
        return getattr(self, f"_{options['action']}")(options)

    def _apply(self, options: dict[str, Any]) -> CleanedJson:
        server_id = options["server"]
        if not Server.objects.filter(pk=server_id).exists():
            raise _Failure(f"There is no server with id {server_id}.")
        if options["seed"] is not None and options["seed"] < 0:
            raise _Failure("--seed must be a non-negative whole number.")
        if options["user_message"] and options["impersonate"]:
            raise _Failure("--impersonate applies to a reply, not to a user message.")
        try:
            text = sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError:
            raise _Failure("Standard input is not UTF-8 text.") from None
        cleaned = selectors.clean_for_server(
            server_id=server_id,
            text=text,
            user_message=options["user_message"],
            preset_name=options["preset"],
            impersonate=options["impersonate"],
            seed=options["seed"],
        )
        return cleaned.to_dict()

    def _import(self, options: dict[str, Any]) -> dict[str, Any]:
        path = Path(options["file"])
        with path.open("rb") as handle:
            raw = handle.read(MAX_EXPORT_BYTES + 1)
        scripts = read_export(raw)
        server = server_ensure(server_id=options["server"], by=CLI)
        _, compiled = services.scripts_import(server=server, scripts=scripts, by=CLI, source=path.name)
        result: dict[str, Any] = {
            "scripts": len(compiled),
            "inactive": [
                {"script": c.script.label, "reason": c.inactive} for c in compiled if c.inactive is not None
            ],
        }
        if refused := len(scripts) - len(compiled):  # only past the server's cap
            result |= {"refused": refused, "refused_reason": services.refused_sentence(refused)}
        return result

    def _list(self, options: dict[str, Any]) -> dict[str, Any]:
        server_id = options["server"]
        if not Server.objects.filter(pk=server_id).exists():
            raise _Failure(f"There is no server with id {server_id}.")
        preset = selectors.preset_named(server_id, None)
        rows = [row.to_dict("server", None) for row in selectors.server_script_rows(server_id)]
        if preset is not None:
            rows += [row.to_dict("preset", preset.name) for row in selectors.preset_script_rows(preset)]
        return {"scripts": rows}
