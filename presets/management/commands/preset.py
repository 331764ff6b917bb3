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

from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser

from core.actors import CLI
from core.json_command import (
    JsonCommand,
    RefusingParser,
    add_import_and_list,
    add_json,
    add_server,
    import_file,
)
from engine.sampling import MODES, PROVIDERS
from presets import selectors, services
from presets.management import history
from presets.reports import import_report, preset_listing
from presets.sampling import selectors as sampling_selectors
from presets.sampling import services as sampling_services
from servers.services import server_ensure


class Command(JsonCommand):
    help = "Import a SillyTavern preset for a server, or list a server's presets, as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, parser_class=RefusingParser)
        add_import_and_list(
            actions,
            noun="preset",
            plural="presets",
            file_help="The preset file (.json).",
            name_help="The preset name (default: the file name).",
        )
        sampling = actions.add_parser("sampling", help="Set a server's sampling choice and show its effect.")
        add_server(sampling)
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
        add_json(sampling)
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
        add_server(channel)
        channel.add_argument("--channel", type=int, required=True, help="The channel or thread id.")
        choice = channel.add_mutually_exclusive_group(required=True)
        choice.add_argument("--preset", help="The preset's name.")
        choice.add_argument("--clear", action="store_true", help="Use the server's active preset again.")
        add_json(channel)

    def run(self, options: dict[str, Any]) -> Any:
        if options["action"] == "import":
            return import_file(
                options,
                max_bytes=settings.PRESET_MAX_BYTES,
                ensure_server=server_ensure,
                do_import=services.preset_import,
                report=import_report,
            )
        if options["action"] == "sampling":
            return self._sampling(options)
        if options["action"] == "list":
            return {"presets": [_row(p) for p in selectors.presets_for(options["server"])]}
        return history.run(options)

    def _sampling(self, options: dict[str, Any]) -> dict[str, Any]:
        pairs = {}
        for item in options["set"]:
            name, equals, value = item.partition("=")
            if not equals or not name.strip():
                raise sampling_services.SamplingError(f"--set takes NAME=VALUE, not {item!r}.")
            pairs[name.strip()] = value
        server = server_ensure(server_id=options["server"], by=CLI)
        choice = sampling_services.sampling_set(
            server=server,
            mode=options["use"],
            provider=options["provider"],
            set_values=pairs,
            unset=options["unset"],
            by=CLI,
        )
        return sampling_selectors.settings_per_provider(choice, sampling_selectors.active_preset(server))


def _row(preset: Any) -> dict[str, Any]:
    row = preset_listing(preset)
    shown = ("preset_id", "name", "active", "shape", "nodes", "injection_style")
    return {key: value for key, value in row.items() if key in shown}


def _preset_arguments(parser: CommandParser) -> None:
    add_server(parser)
    parser.add_argument("--preset", required=True, help="The preset's name.")
    add_json(parser)
