"""`manage.py preset import FILE --server ID …`, `manage.py preset list --server ID` and
`manage.py preset sampling --server ID (--use preset|server|merged) [--set NAME=VALUE ...]
[--unset NAME ...] --json` (the server's sampling choice, then its effective settings per provider);
preset history: `preset versions|diff|rollback --server ID --preset NAME …`, and channel presets:
`preset channel --server ID --channel ID (--preset NAME | --clear)`. JSON out.

The contract (acceptance checks use it): success prints one JSON object and exits 0; a refused file,
a name clash without --replace/--keep-both, or an unreadable file prints ONE line starting
`error: ` on stderr and exits 2. Never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from engine.sampling import MODES, PROVIDERS
from engine.st_format import ImportRefused
from presets import sampling_selectors, sampling_services, selectors, services
from presets.management import history
from presets.reports import import_report, preset_listing
from servers.services import server_ensure

EXIT_REFUSED = 2


class _Parser(CommandParser):
    def error(self, message: str) -> NoReturn:
        if self.called_from_command_line:
            sys.stderr.write(f"error: {message}\n")
            sys.exit(EXIT_REFUSED)
        raise CommandError(f"error: {message}", returncode=EXIT_REFUSED)


class Command(BaseCommand):
    help = "Import a SillyTavern preset for a server, or list a server's presets, as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, parser_class=_Parser)
        importing = actions.add_parser("import", help="Import a preset file.")
        importing.add_argument("file", help="The preset file (.json).")
        importing.add_argument("--server", type=int, required=True, help="The server (Discord guild) id.")
        importing.add_argument("--name", help="The preset name (default: the file name).")
        clash = importing.add_mutually_exclusive_group()
        clash.add_argument("--replace", action="store_true", help="Replace a preset with the same name.")
        clash.add_argument("--keep-both", action="store_true", help="Keep both: the new one gets ' (2)'.")
        importing.add_argument("--no-activate", action="store_true", help="Store without activating it.")
        importing.add_argument("--json", action="store_true", help="Print JSON (always on).")
        listing = actions.add_parser("list", help="List a server's presets.")
        listing.add_argument("--server", type=int, required=True, help="The server (Discord guild) id.")
        listing.add_argument("--json", action="store_true", help="Print JSON (always on).")
        sampling = actions.add_parser("sampling", help="Set a server's sampling choice and show its effect.")
        sampling.add_argument("--server", type=int, required=True, help="The server (Discord guild) id.")
        sampling.add_argument(
            "--use", choices=MODES, help="Send the preset's, the server's, or merged values."
        )
        sampling.add_argument("--provider", choices=PROVIDERS, help="The provider the server sends to.")
        sampling.add_argument(
            "--set", action="extend", nargs="+", default=[], metavar="NAME=VALUE", help="Set server values."
        )
        sampling.add_argument(
            "--unset", action="extend", nargs="+", default=[], metavar="NAME", help="Remove server values."
        )
        sampling.add_argument("--json", action="store_true", help="Print JSON (always on).")
        history = actions.add_parser("versions", help="List a preset's versions.")
        _preset_arguments(history)
        diff = actions.add_parser("diff", help="What changed between two versions of a preset.")
        _preset_arguments(diff)
        diff.add_argument("--from", dest="from_version", type=int, required=True, help="The earlier version.")
        diff.add_argument("--to", dest="to_version", type=int, required=True, help="The later version.")
        rollback = actions.add_parser("rollback", help="Make an earlier version current (a new version).")
        _preset_arguments(rollback)
        rollback.add_argument(
            "--to", dest="to_version", type=int, required=True, help="The version to restore."
        )
        channel = actions.add_parser("channel", help="Give a channel its own preset, or clear it.")
        channel.add_argument("--server", type=int, required=True, help="The server (Discord guild) id.")
        channel.add_argument("--channel", type=int, required=True, help="The channel or thread id.")
        choice = channel.add_mutually_exclusive_group(required=True)
        choice.add_argument("--preset", help="The preset's name.")
        choice.add_argument("--clear", action="store_true", help="Use the server's active preset again.")
        channel.add_argument("--json", action="store_true", help="Print JSON (always on).")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["action"] == "import":
                report: Any = self._import(options)
            elif options["action"] == "sampling":
                report = self._sampling(options)
            elif options["action"] == "list":
                report = {"presets": [_row(p) for p in selectors.presets_for(options["server"])]}
            else:
                report = history.run(options)
        except ImportRefused as exc:
            self._fail(exc.message)
        except history.Refused as exc:
            self._fail(exc.message)
        except services.PresetError as exc:
            suffix = " Use --replace or --keep-both." if options["action"] == "import" else ""
            self._fail(exc.message + suffix)
        except sampling_services.SamplingError as exc:
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
        with path.open("rb") as handle:  # never more than the limit plus one byte: the parser refuses
            raw = handle.read(settings.PRESET_MAX_BYTES + 1)
        server = server_ensure(server_id=options["server"])
        on_clash = "replace" if options["replace"] else "keep_both" if options["keep_both"] else "ask"
        result = services.preset_import(
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

    def _sampling(self, options: dict[str, Any]) -> dict[str, Any]:
        pairs = {}
        for item in options["set"]:
            name, equals, value = item.partition("=")
            if not equals or not name.strip():
                raise sampling_services.SamplingError(f"--set takes NAME=VALUE, not {item!r}.")
            pairs[name.strip()] = value
        server = server_ensure(server_id=options["server"])
        choice = sampling_services.sampling_set(
            server=server,
            mode=options["use"],
            provider=options["provider"],
            set_values=pairs,
            unset=options["unset"],
            by=None,
            actor_label="cli",
        )
        return sampling_selectors.settings_per_provider(choice, sampling_selectors.active_preset(server))

    def _fail(self, message: str, code: int = EXIT_REFUSED) -> NoReturn:
        sys.stderr.write("error: " + " ".join(message.split()) + "\n")
        sys.stderr.flush()
        sys.exit(code)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _row(preset: Any) -> dict[str, Any]:
    row = preset_listing(preset)
    return {key: row[key] for key in ("preset_id", "name", "active", "shape", "nodes", "injection_style")}


def _preset_arguments(parser: CommandParser) -> None:
    parser.add_argument("--server", type=int, required=True, help="The server (Discord guild) id.")
    parser.add_argument("--preset", required=True, help="The preset's name.")
    parser.add_argument("--json", action="store_true", help="Print JSON (always on).")
