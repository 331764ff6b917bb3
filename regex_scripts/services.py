"""Writes for regex scripts: the server's own list and its switches for preset scripts.

Each runs in one transaction (servers.writes.server_write), leaves an audit entry and bumps the
scripts' cache stamp inside it, so every process reloads the server's scripts once it commits.
`by` is who acts: a dashboard user, or an agent (`core.actors`) for the CLI and the bot.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from django.db.models import Max

from core.actors import Actor
from core.errors import UserError
from engine.regex import CompiledScript, RegexScript, compile_scripts
from servers.audit_actions import AuditAction
from servers.models import AuditEvent, Server
from servers.writes import server_write

from . import cache as regex_cache
from .models import PresetScriptSwitch, ServerScript

if TYPE_CHECKING:  # annotations only: presets' rows are read through presets.selectors
    from presets.models import Preset

MAX_SERVER_SCRIPTS = 512  # issue 25: every stored script may run on every request


def refused_sentence(refused: int) -> str:
    """What an import summary says about the scripts past the server's cap."""
    return (
        f"{refused:,} script{'s were' if refused != 1 else ' was'} refused: a server holds at most "
        f"{MAX_SERVER_SCRIPTS} regex scripts."
    )


class RegexScriptError(UserError):
    """A write that cannot be done as asked; `message` is one sentence for the user."""


def scripts_import(
    *,
    server: Server,
    scripts: Sequence[RegexScript],
    by: Actor,
    source: str = "",
) -> tuple[list[ServerScript], tuple[CompiledScript, ...]]:
    """Append `scripts` to the server's list, in order; returns the rows and their compile status.

    A server holds at most MAX_SERVER_SCRIPTS: the scripts past the room left are refused (the
    caller's summary says how many: `len(scripts) - len(compiled)`); with no room at all it raises.
    """
    scripts = [script if script.id else replace(script, id=str(uuid.uuid4())) for script in scripts]
    compiled = compile_scripts(scripts)
    with server_write(server_id=server.pk, stamps=(regex_cache.STAMP,), lock=True):
        existing = ServerScript.objects.filter(server=server)
        room = MAX_SERVER_SCRIPTS - existing.count()
        if room <= 0 and scripts:
            raise RegexScriptError(
                f"This server already holds {MAX_SERVER_SCRIPTS} regex scripts, the most a server may hold: "
                "delete some first."
            )
        offered = len(scripts)
        scripts, compiled = scripts[:room], compiled[:room]
        start = (existing.aggregate(top=Max("position"))["top"] or 0) + 1
        rows = ServerScript.objects.bulk_create(
            ServerScript(
                server=server, position=start + offset, data=script.to_json(), enabled=not script.disabled
            )
            for offset, script in enumerate(scripts)
        )
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.REGEX_IMPORT,
            detail={
                "scripts": len(scripts),
                "refused": offered - len(scripts),
                "inactive": sum(1 for c in compiled if not c.active),
                "file": source[:200],
            },
        )
    return rows, compiled


def script_update(*, row: ServerScript, script: RegexScript, by: Actor) -> None:
    """Replace one script of the server's list with the edited one (same place in the list)."""
    with server_write(server_id=row.server_id, stamps=(regex_cache.STAMP,)):
        row.data = script.to_json()
        row.save(update_fields=["data", "updated_at"])
        AuditEvent.record(
            server=row.server_id,
            actor=by,
            action=AuditAction.REGEX_EDIT,
            target=row,
            detail={"script": script.label},
        )


def script_set_enabled(*, row: ServerScript, enabled: bool, by: Actor) -> None:
    with server_write(server_id=row.server_id, stamps=(regex_cache.STAMP,)):
        ServerScript.objects.filter(pk=row.pk).update(enabled=enabled)
        row.enabled = enabled
        AuditEvent.record(
            server=row.server_id,
            actor=by,
            action=AuditAction.REGEX_ENABLE if enabled else AuditAction.REGEX_DISABLE,
            target=row,
            detail={"script": str(row)},
        )


def script_move(*, row: ServerScript, direction: Literal["up", "down"], by: Actor) -> None:
    """Swap the script with its neighbour above or below (nothing happens at either end)."""
    with server_write(server_id=row.server_id, lock=True) as write:
        ordered = list(ServerScript.objects.filter(server_id=row.server_id).order_by("position", "id"))
        index = next(i for i, other in enumerate(ordered) if other.pk == row.pk)
        target = index - 1 if direction == "up" else index + 1
        if not 0 <= target < len(ordered):
            return
        ordered[index], ordered[target] = ordered[target], ordered[index]
        for position, other in enumerate(ordered, start=1):
            if other.position != position:
                ServerScript.objects.filter(pk=other.pk).update(position=position)
        write.touch(regex_cache.STAMP)  # a script already at the end bumps nothing
        AuditEvent.record(
            server=row.server_id,
            actor=by,
            action=AuditAction.REGEX_MOVE,
            target=row,
            detail={"script": str(row), "direction": direction},
        )


def script_delete(*, row: ServerScript, by: Actor) -> None:
    server_id = row.server_id
    with server_write(server_id=server_id, stamps=(regex_cache.STAMP,)):
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.REGEX_DELETE,
            detail={"script": str(row), "script_json": row.data},
        )
        row.delete()


def preset_script_switch(*, preset: Preset, script_key: str, enabled: bool, by: Actor) -> None:
    """This server's on/off choice for one script the preset ships (it overrides the file's flag)."""
    with server_write(server_id=preset.server_id, stamps=(regex_cache.STAMP,)):
        PresetScriptSwitch.objects.update_or_create(
            preset=preset,
            script_key=script_key[:255],
            defaults={"enabled": enabled, "server_id": preset.server_id},
        )
        AuditEvent.record(
            server=preset.server_id,
            actor=by,
            action=AuditAction.REGEX_PRESET_ENABLE if enabled else AuditAction.REGEX_PRESET_DISABLE,
            target=preset,
            detail={"script": script_key},
        )
