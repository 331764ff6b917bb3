"""What the JSON management commands share (`card`, `lorebook`, `preset`, `regex`).

Their contract (acceptance checks use it): success prints one JSON object and exits 0; a refusal
(a refused file, a name clash without --replace/--keep-both, a bad option, an unreadable file, the
database away) prints ONE line starting `error: ` on stderr and exits 2; anything unexpected one
such line and exit 1. Never a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from core.actors import CLI
from core.errors import REFUSALS, NameClash, UserError
from engine import EngineError

EXIT_REFUSED = 2


def fail(message: str, code: int = EXIT_REFUSED) -> NoReturn:
    """The one `error:` line (whitespace folded, so it stays one line) and the exit."""
    sys.stderr.write("error: " + " ".join(message.split()) + "\n")
    sys.stderr.flush()
    sys.exit(code)


def refusal_sentence(exc: UserError | EngineError) -> str:
    """What a command says for a refusal: its sentence, and for a name clash how to import anyway."""
    if isinstance(exc, NameClash):
        return f"{exc.message} {exc.command_hint}"
    return exc.message


def refuse(exc: UserError | EngineError) -> NoReturn:
    """A command's one place for either root: the sentence as the `error:` line, exit 2."""
    fail(refusal_sentence(exc))


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class RefusingParser(CommandParser):
    """A (sub)command parser whose usage errors keep the contract: one `error:` line, exit 2."""

    def error(self, message: str) -> NoReturn:
        if self.called_from_command_line:
            sys.stderr.write(f"error: {message}\n")
            sys.exit(EXIT_REFUSED)
        raise CommandError(f"error: {message}", returncode=EXIT_REFUSED)


class JsonCommand(BaseCommand):
    """A command of subcommands (`action`) that answers JSON: `run(options)` gives the report; a
    refusal (either root) is shown by `refuse`."""

    def run(self, options: dict[str, Any]) -> Any:
        raise NotImplementedError

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = self.run(options)
        except REFUSALS as exc:
            refuse(exc)
        except OSError as exc:
            fail(f"Cannot read {options.get('file')}: {exc.strerror or exc}.")
        except DatabaseError as exc:
            fail(f"The database is unavailable ({first_line(exc)}).")
        except Exception as exc:  # the contract: one error line, never a traceback
            fail(f"Unexpected failure: {first_line(exc)}.", code=1)
        self.stdout.write(json.dumps(report, ensure_ascii=False))


def add_import_and_list(
    actions: Any, *, noun: str, plural: str, file_help: str, name_help: str
) -> tuple[CommandParser, CommandParser]:
    """The `import FILE --server ID [--name] [--replace | --keep-both] [--no-activate] --json` and
    `list --server ID --json` subcommands, for `noun` (a preset, a lorebook, a card)."""
    importing = actions.add_parser("import", help=f"Import a {noun} file.")
    importing.add_argument("file", help=file_help)
    add_server(importing)
    importing.add_argument("--name", help=name_help)
    clash = importing.add_mutually_exclusive_group()
    clash.add_argument("--replace", action="store_true", help=f"Replace a {noun} with the same name.")
    clash.add_argument("--keep-both", action="store_true", help="Keep both: the new one gets ' (2)'.")
    importing.add_argument("--no-activate", action="store_true", help="Store without activating it.")
    add_json(importing)
    listing = actions.add_parser("list", help=f"List a server's {plural}.")
    add_server(listing)
    add_json(listing)
    return importing, listing


def add_server(parser: CommandParser) -> None:
    parser.add_argument("--server", type=int, required=True, help="The server (Discord guild) id.")


def add_json(parser: CommandParser) -> None:
    parser.add_argument("--json", action="store_true", help="Print JSON (always on).")


def import_file(
    options: dict[str, Any],
    *,
    max_bytes: int,
    ensure_server: Callable[..., Any],
    do_import: Callable[..., Any],
    report: Callable[[Any], Any],
) -> Any:
    """Read the `import` subcommand's file (never more than `max_bytes` plus one byte: the importer
    refuses it) and import it for the server, as the command line (`by=CLI`). The server
    is made once the file is read, by `ensure_server` (the caller's `servers.services.server_ensure`:
    this package sits below the apps)."""
    path = Path(options["file"])
    with path.open("rb") as handle:
        raw = handle.read(max_bytes + 1)
    on_clash = "replace" if options["replace"] else "keep_both" if options["keep_both"] else "ask"
    result = do_import(
        server=ensure_server(server_id=options["server"], by=CLI),
        raw=raw,
        filename=path.name,
        name=options.get("name"),
        on_clash=on_clash,
        activate=not options["no_activate"],
        by=CLI,
    )
    return report(result)
