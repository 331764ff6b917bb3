"""`manage.py lorebook import FILE --server ID …`, `lorebook list --server ID`, `lorebook settings --server ID …`.

The contract (acceptance checks use it): success prints one JSON object and exits 0; a refused file,
a name clash without --replace/--keep-both, a bad setting or an unreadable file prints ONE line
starting `error: ` on stderr and exits 2. Never a traceback.
"""

from __future__ import annotations

from pathlib import Path
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
from engine.worldinfo import STRATEGIES, check_lorebook_size
from lorebooks import selectors, services
from lorebooks.reports import import_report, lorebook_listing
from servers.services import server_ensure

_ON_OFF = ("on", "off")
# flag → (setting, kind)
_SETTINGS = {
    "scan_depth": int,
    "budget_percent": int,
    "budget_cap": int,
    "recursive": "on_off",
    "max_recursion": int,
    "min_activations": int,
    "min_activations_depth_max": int,
    "case_sensitive": "on_off",
    "whole_words": "on_off",
    "group_scoring": "on_off",
    "include_names": "on_off",
    "strategy": str,
    "context_size": int,
}
_SETTING_NAMES = {"whole_words": "match_whole_words"}


class Command(JsonCommand):
    help = (
        "Import a SillyTavern lorebook for a server, list its lorebooks, or change its World Info settings."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, parser_class=RefusingParser)
        add_import_and_list(
            actions,
            noun="lorebook",
            plural="lorebooks",
            file_help="The lorebook (World Info) file (.json).",
            name_help="The lorebook name (default: the file name).",
        )
        setting = actions.add_parser("settings", help="Show or change a server's World Info settings.")
        add_server(setting)
        setting.add_argument("--scan-depth", type=int)
        setting.add_argument("--budget-percent", type=int)
        setting.add_argument("--budget-cap", type=int, help="In tokens; 0 = no cap.")
        setting.add_argument("--recursive", choices=_ON_OFF)
        setting.add_argument("--max-recursion", type=int, help="0 = unlimited.")
        setting.add_argument("--min-activations", type=int)
        setting.add_argument("--min-activations-depth-max", type=int, help="0 = the chat's length.")
        setting.add_argument("--case-sensitive", choices=_ON_OFF)
        setting.add_argument("--whole-words", choices=_ON_OFF)
        setting.add_argument("--group-scoring", choices=_ON_OFF)
        setting.add_argument("--include-names", choices=_ON_OFF)
        setting.add_argument("--strategy", choices=STRATEGIES)
        setting.add_argument("--context-size", type=int)
        add_json(setting)

    def run(self, options: dict[str, Any]) -> Any:
        if options["action"] == "import":
            check_lorebook_size(Path(options["file"]).stat().st_size, settings.LOREBOOK_MAX_BYTES)
            return import_file(
                options,
                max_bytes=settings.LOREBOOK_MAX_BYTES,
                ensure_server=server_ensure,
                do_import=services.lorebook_import,
                report=import_report,
            )
        if options["action"] == "settings":
            return self._settings(options)
        return {"lorebooks": [lorebook_listing(b) for b in selectors.lorebooks_for(options["server"])]}

    def _settings(self, options: dict[str, Any]) -> dict[str, Any]:
        server = server_ensure(server_id=options["server"], by=CLI)
        changes: dict[str, Any] = {}
        for flag, kind in _SETTINGS.items():
            value = options.get(flag)
            if value is None:
                continue
            changes[_SETTING_NAMES.get(flag, flag)] = value == "on" if kind == "on_off" else value
        current = (
            services.settings_update(server=server, changes=changes, by=CLI)
            if changes
            else selectors.world_info_settings(server)
        )
        return {"settings": current.to_dict()}
