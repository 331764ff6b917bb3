"""The history and channel actions of `manage.py preset` (versions, diff, rollback, channel)."""

from __future__ import annotations

from typing import Any

from core.actors import CLI
from core.errors import UserError
from presets.channels import services as channel_services
from presets.editor import services as edit_services
from presets.models import Preset
from presets.versions import selectors as versions
from servers.models import Server


class Refused(UserError):
    """A request the command cannot carry out; `message` is one sentence."""


def run(options: dict[str, Any]) -> Any:
    """The JSON answer of one action."""
    server = Server.objects.filter(pk=options["server"]).first()
    if server is None:
        raise Refused(f"There is no server with id {options['server']}.")
    action = options["action"]
    if action == "channel":
        return _channel(server, options)
    preset = _preset(server, options["preset"])
    try:
        if action == "versions":
            return [versions.version_listing(row) for row in reversed(versions.versions_of(preset))]
        if action == "diff":
            return versions.diff(preset, options["from_version"], options["to_version"]).to_dict()
        result = edit_services.preset_rollback(preset=preset, to=options["to_version"], by=CLI)
    except versions.VersionNotFound as exc:
        raise Refused(exc.message) from None
    return {
        **versions.version_listing(versions.version_row(preset, result.version)),
        "rolled_back_to": options["to_version"],
    }


def _preset(server: Server, name: str) -> Preset:
    preset = server.presets.defer("stored_text").filter(name=name).first()
    if preset is None:
        raise Refused(f"This server has no preset named {name!r}.")
    return preset


def _channel(server: Server, options: dict[str, Any]) -> dict[str, Any]:
    preset = None if options["clear"] else _preset(server, options["preset"])
    try:
        changed = channel_services.channel_preset_set(
            server=server, channel_id=options["channel"], preset=preset, by=CLI
        )
    except ValueError as exc:
        raise Refused(str(exc)) from None
    return {
        "server": server.pk,
        "channel": options["channel"],
        "preset": preset.name if preset is not None else None,
        "preset_id": preset.pk if preset is not None else None,
        "changed": changed,
    }
