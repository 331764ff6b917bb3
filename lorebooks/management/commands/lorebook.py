"""`manage.py lorebook import FILE --server ID …`, `lorebook list --server ID`, `lorebook settings --server ID …`.

The contract (acceptance checks use it): success prints one JSON object and exits 0; a refused file,
a name clash without --replace/--keep-both, a bad setting or an unreadable file prints ONE line
starting `error: ` on stderr and exits 2. Never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from engine.st_format import ImportRefused
from engine.worldinfo import STRATEGIES, LorebookRefused, check_lorebook_size
from lorebooks import selectors, services
from lorebooks.reports import import_report, lorebook_listing
from servers.services import server_ensure

EXIT_REFUSED = 2
_ON_OFF = ("on", "off")
# flag → (setting, kind)
_SETTINGS = {
    "scan_depth": int,
    "budget_percent": int,
    "budget_cap": int,
    "recursive": "on_off",
    "max_recursion": int,
    "min_activations": int,
    "case_sensitive": "on_off",
    "whole_words": "on_off",
    "group_scoring": "on_off",
    "include_names": "on_off",
    "strategy": str,
    "context_size": int,
}
_SETTING_NAMES = {"whole_words": "match_whole_words"}


class _Parser(CommandParser):
    def error(self, message: str) -> NoReturn:
        if self.called_from_command_line:
            sys.stderr.write(f"error: {message}\n")
            sys.exit(EXIT_REFUSED)
        raise CommandError(f"error: {message}", returncode=EXIT_REFUSED)


class Command(BaseCommand):
    help = (
        "Import a SillyTavern lorebook for a server, list its lorebooks, or change its World Info settings."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, parser_class=_Parser)
        importing = actions.add_parser("import", help="Import a lorebook (World Info) file.")
        importing.add_argument("file", help="The lorebook file (.json).")
        importing.add_argument("--server", type=int, required=True, help="The server (Discord guild) id.")
        importing.add_argument("--name", help="The lorebook name (default: the file name).")
        clash = importing.add_mutually_exclusive_group()
        clash.add_argument("--replace", action="store_true", help="Replace a lorebook with the same name.")
        clash.add_argument("--keep-both", action="store_true", help="Keep both: the new one gets ' (2)'.")
        importing.add_argument("--no-activate", action="store_true", help="Store without activating it.")
        importing.add_argument("--json", action="store_true", help="Print JSON (always on).")
        listing = actions.add_parser("list", help="List a server's lorebooks.")
        listing.add_argument("--server", type=int, required=True, help="The server (Discord guild) id.")
        listing.add_argument("--json", action="store_true", help="Print JSON (always on).")
        setting = actions.add_parser("settings", help="Show or change a server's World Info settings.")
        setting.add_argument("--server", type=int, required=True, help="The server (Discord guild) id.")
        setting.add_argument("--scan-depth", type=int)
        setting.add_argument("--budget-percent", type=int)
        setting.add_argument("--budget-cap", type=int, help="In tokens; 0 = no cap.")
        setting.add_argument("--recursive", choices=_ON_OFF)
        setting.add_argument("--max-recursion", type=int, help="0 = unlimited.")
        setting.add_argument("--min-activations", type=int)
        setting.add_argument("--case-sensitive", choices=_ON_OFF)
        setting.add_argument("--whole-words", choices=_ON_OFF)
        setting.add_argument("--group-scoring", choices=_ON_OFF)
        setting.add_argument("--include-names", choices=_ON_OFF)
        setting.add_argument("--strategy", choices=STRATEGIES)
        setting.add_argument("--context-size", type=int)
        setting.add_argument("--json", action="store_true", help="Print JSON (always on).")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["action"] == "import":
                report = self._import(options)
            elif options["action"] == "settings":
                report = self._settings(options)
            else:
                report = {
                    "lorebooks": [lorebook_listing(b) for b in selectors.lorebooks_for(options["server"])]
                }
        except (LorebookRefused, ImportRefused) as exc:
            self._fail(exc.message)
        except services.LorebookNameClash as exc:
            self._fail(exc.message + " Use --replace or --keep-both.")
        except services.LorebookError as exc:
            self._fail(exc.message)
        except OSError as exc:
            self._fail(f"Cannot read {options.get('file')}: {exc.strerror or exc}.")
        except DatabaseError as exc:
            self._fail(f"The database is unavailable ({_first_line(exc)}).")
        except Exception as exc:  # the contract: one error line, never a traceback
            self._fail(f"Unexpected failure: {_first_line(exc)}.", code=1)
        self.stdout.write(json.dumps(report, ensure_ascii=False))

    def _import(self, options: dict[str, Any]) -> dict[str, Any]:
        path = Path(options["file"])
        check_lorebook_size(path.stat().st_size, settings.LOREBOOK_MAX_BYTES)
        with path.open("rb") as handle:  # never more than the limit plus one byte: the parser refuses
            raw = handle.read(settings.LOREBOOK_MAX_BYTES + 1)
        server = server_ensure(server_id=options["server"])
        on_clash = "replace" if options["replace"] else "keep_both" if options["keep_both"] else "ask"
        result = services.lorebook_import(
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

    def _settings(self, options: dict[str, Any]) -> dict[str, Any]:
        server = server_ensure(server_id=options["server"])
        changes: dict[str, Any] = {}
        for flag, kind in _SETTINGS.items():
            value = options.get(flag)
            if value is None:
                continue
            changes[_SETTING_NAMES.get(flag, flag)] = value == "on" if kind == "on_off" else value
        current = (
            services.settings_update(server=server, changes=changes, by=None, actor_label="cli")
            if changes
            else selectors.world_info_settings(server)
        )
        return {"settings": current.to_dict()}

    def _fail(self, message: str, code: int = EXIT_REFUSED) -> NoReturn:
        sys.stderr.write("error: " + " ".join(message.split()) + "\n")
        sys.stderr.flush()
        sys.exit(code)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
