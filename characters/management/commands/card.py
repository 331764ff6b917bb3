"""`manage.py card import FILE --server ID [--name NAME] [--replace | --keep-both] [--no-activate] --json`
and `manage.py card list --server ID --json`.

The contract (acceptance checks use it): success prints one JSON object and exits 0; a refused file,
a name clash without --replace/--keep-both, or an unreadable file prints ONE line starting `error: `
on stderr and exits 2. Never a traceback.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from characters import selectors, services
from characters.reports import card_listing, import_report
from core.json_command import JsonCommand, RefusingParser, add_import_and_list, import_file
from engine.cards import MAX_CARD_BYTES
from servers.services import server_ensure


class Command(JsonCommand):
    help = "Import a character card (JSON or PNG) for a server, or list a server's cards, as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, parser_class=RefusingParser)
        add_import_and_list(
            actions,
            noun="card",
            plural="cards",
            file_help="The card file (.json or .png).",
            name_help="The card's name here (default: the card's own name).",
        )

    def run(self, options: dict[str, Any]) -> Any:
        if options["action"] == "import":
            return import_file(
                options,
                max_bytes=MAX_CARD_BYTES,
                ensure_server=server_ensure,
                do_import=services.card_import,
                report=import_report,
            )
        return {"cards": [card_listing(row) for row in selectors.cards_for(options["server"])]}
