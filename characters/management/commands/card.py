"""`manage.py card import FILE --server ID [--name NAME] [--replace | --keep-both] [--no-activate] --json`
and `manage.py card list --server ID --json`.

The contract (acceptance checks use it): success prints one JSON object and exits 0; a refused file,
a name clash without --replace/--keep-both, or an unreadable file prints ONE line starting `error: `
on stderr and exits 2. Never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from characters import selectors, services
from characters.reports import card_listing, import_report
from engine.cards import MAX_CARD_BYTES
from engine.st_format import ImportRefused
from servers.services import server_ensure

EXIT_REFUSED = 2


class _Parser(CommandParser):
    def error(self, message: str) -> NoReturn:
        if self.called_from_command_line:
            sys.stderr.write(f"error: {message}\n")
            sys.exit(EXIT_REFUSED)
        raise CommandError(f"error: {message}", returncode=EXIT_REFUSED)


class Command(BaseCommand):
    help = "Import a character card (JSON or PNG) for a server, or list a server's cards, as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, parser_class=_Parser)
        importing = actions.add_parser("import", help="Import a card file (.json or .png).")
        importing.add_argument("file", help="The card file.")
        importing.add_argument("--server", type=int, required=True, help="The server (Discord guild) id.")
        importing.add_argument("--name", help="The card's name here (default: the card's own name).")
        clash = importing.add_mutually_exclusive_group()
        clash.add_argument("--replace", action="store_true", help="Replace a card with the same name.")
        clash.add_argument("--keep-both", action="store_true", help="Keep both: the new one gets ' (2)'.")
        importing.add_argument("--no-activate", action="store_true", help="Store without activating it.")
        importing.add_argument("--json", action="store_true", help="Print JSON (always on).")
        listing = actions.add_parser("list", help="List a server's cards.")
        listing.add_argument("--server", type=int, required=True, help="The server (Discord guild) id.")
        listing.add_argument("--json", action="store_true", help="Print JSON (always on).")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["action"] == "import":
                report = self._import(options)
            else:
                report = {"cards": [card_listing(row) for row in selectors.cards_for(options["server"])]}
        except ImportRefused as exc:
            self._fail(exc.message)
        except services.CardNameClash as exc:
            self._fail(exc.message + " Use --replace or --keep-both.")
        except OSError as exc:
            self._fail(f"Cannot read {options.get('file')}: {exc.strerror or exc}.")
        except DatabaseError as exc:
            self._fail(f"The database is unavailable ({_first_line(exc)}).")
        except Exception as exc:  # the contract: one error line, never a traceback
            self._fail(f"Unexpected failure: {_first_line(exc)}.", code=1)
        self.stdout.write(json.dumps(report, ensure_ascii=False))

    def _import(self, options: dict[str, Any]) -> dict[str, Any]:
        path = Path(options["file"])
        with path.open("rb") as handle:  # never more than the limit plus one byte: the reader refuses
            raw = handle.read(MAX_CARD_BYTES + 1)
        server = server_ensure(server_id=options["server"])
        on_clash = "replace" if options["replace"] else "keep_both" if options["keep_both"] else "ask"
        result = services.card_import(
            server=server,
            raw=raw,
            filename=path.name,
            name=options.get("name"),
            on_clash=on_clash,
            activate=not options["no_activate"],
            by=None,
            actor_label="cli",
        )
        return import_report(result)

    def _fail(self, message: str, code: int = EXIT_REFUSED) -> NoReturn:
        sys.stderr.write(f"error: {message}\n")
        sys.exit(code)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
