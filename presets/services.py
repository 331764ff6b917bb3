"""Writes for presets. Each runs in one transaction (servers.writes.server_write), leaves an audit
entry and bumps the presets' cache stamp inside that transaction, before it commits.

`by` is who acts: a dashboard user, or an agent (`core.actors`: "api token tk_…", "cli").
Activation and imports lock the server row first, so two admins clicking at once are serialised;
the partial unique constraint (one active preset per server) is the guarantee behind it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, connection
from django.utils import timezone

from core import names
from core.actors import Actor, user_of
from core.errors import UserError
from engine.st_format import ImportSummary, ParsedPreset, parse_preset, resummarize
from engine.st_format import PresetNode as StNode
from servers.audit_actions import AuditAction
from servers.imports import NameClash, OnClash, place_import
from servers.models import AuditEvent, Server
from servers.writes import server_write

from . import cache as preset_cache
from . import selectors
from .models import NAME_MAX_LENGTH, InjectionStyle, Preset, PresetNode
from .regex_source import regex_source_of_text
from .versions import services as version_services

FALLBACK_NAME = "Untitled preset"


class PresetError(UserError):
    """A write that cannot be done as asked; `message` is one sentence for the user."""


class PresetNameClash(NameClash, PresetError):
    """An import or rename would reuse a name already taken on the server."""

    kind = "preset"


@dataclass(frozen=True)
class ImportResult:
    """What an import stored: the preset row, its summary, and what happened to a replaced one."""

    preset: Preset
    summary: ImportSummary
    replaced: bool
    carried_over: int | None  # choices carried over by identifier when replacing, else None


def preset_import(
    *,
    server: Server,
    raw: bytes,
    filename: str,
    name: str | None = None,
    on_clash: OnClash = "ask",
    activate: bool = True,
    by: Actor,
) -> ImportResult:
    """Parse and store an upload. Raises ImportRefused (not a preset / too large) or PresetNameClash.

    A fresh import becomes active when `activate`; a replacement keeps the replaced preset's active
    flag and its enabled/disabled choices (matched by identifier). Nothing is written on any error.
    """
    parsed = parse_preset(raw, filename=filename, max_bytes=settings.PRESET_MAX_BYTES)
    wanted = clean_name(name) or clean_name(parsed.name) or FALLBACK_NAME
    with server_write(server_id=server.pk, stamps=(preset_cache.STAMP,)):
        placement = place_import(
            server_id=server.pk,
            rows=server.presets.all(),
            wanted=wanted,
            on_clash=on_clash,
            max_length=NAME_MAX_LENGTH,
            clash=PresetNameClash,
        )
        wanted, existing = placement.name, placement.replaces
        replaced, carried_over, nodes = False, None, parsed.nodes
        is_active = activate
        if existing is not None:
            nodes, carried_over = carry_choices_over(existing, parsed.nodes)
            is_active = existing.is_active
            replaced = True
            # The old row steps aside (a name no clean name can be) until the new one has taken
            # over its history below; then it is deleted with its nodes.
            Preset.objects.filter(pk=existing.pk).update(name=f" replaced {existing.pk}", is_active=False)
        if is_active:
            server.presets.filter(is_active=True).update(is_active=False)
        summary = parsed.summary
        if replaced:
            # The carried-over choices change what is enabled: recount hidden blocks, macros and HTML too.
            summary = resummarize(summary, nodes)
        preset = _store(
            server,
            parsed,
            name=wanted,
            filename=filename,
            nodes=nodes,
            summary=summary,
            is_active=is_active,
            carried_over=carried_over,
            by=by,
        )
        if existing is not None:  # replaced
            version_services.adopt_history(old_id=existing.pk, new=preset)
            existing.delete()
        version_services.record_version(
            preset=preset,
            kind="replace" if replaced else "import",
            reason=f"{'replaced by' if replaced else 'uploaded'} {filename}",
            by=by,
            nodes=nodes,
            source_text=parsed.stored_text,
        )
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.PRESET_REPLACE if replaced else AuditAction.PRESET_IMPORT,
            target=preset,
            detail={"shape": parsed.shape, "nodes": len(nodes), "active": is_active},
        )
    return ImportResult(preset=preset, summary=summary, replaced=replaced, carried_over=carried_over)


def clean_name(name: str | None) -> str:
    """A preset name as stored: whitespace trimmed, cut to the column's length."""
    return names.clean_name(name, max_length=NAME_MAX_LENGTH)


def carry_choices_over(old: Preset, nodes: tuple[StNode, ...]) -> tuple[tuple[StNode, ...], int]:
    """`nodes` with the admin's on/off choices of `old` carried over by identifier, and how many."""
    previous = dict(old.nodes.values_list("identifier", "enabled"))
    carried, result = 0, []
    for node in nodes:
        if node.switchable and node.identifier in previous:
            carried += node.toggleable  # chatHistory's choice is kept too, but not counted as a switch
            if previous[node.identifier] != node.enabled:
                node = _with_enabled(node, previous[node.identifier])
        result.append(node)
    return tuple(result), carried


def _with_enabled(node: StNode, enabled: bool) -> StNode:
    values = node.to_dict()
    values["enabled"] = enabled
    return StNode.from_dict(values)


def _store(
    server: Server,
    parsed: ParsedPreset,
    *,
    name: str,
    filename: str,
    nodes: tuple[StNode, ...],
    summary: ImportSummary,
    is_active: bool,
    carried_over: int | None,
    by: Actor,
) -> Preset:
    user = user_of(by)
    preset = Preset.objects.create(
        server=server,
        name=name,
        shape=parsed.shape,
        is_active=is_active,
        stored_text=parsed.stored_text,
        regex_source=regex_source_of_text(parsed.stored_text),
        settings=parsed.settings.to_dict(),
        sampling=parsed.sampling,
        summary=summary.to_dict(),
        carried_over=carried_over,
        node_count=len(nodes),
        source_filename=filename[:255],
        created_by=user,
    )
    _insert_nodes(preset, nodes)
    return preset


_NODE_COLUMNS = ("preset_id", "position", *selectors.ST_NODE_FIELDS)


def _insert_nodes(preset: Preset, nodes: tuple[StNode, ...]) -> None:
    """Insert the nodes in one go: COPY on PostgreSQL (a megabyte of text costs a third of an
    INSERT's time that way), bulk_create elsewhere."""
    rows = [
        (
            preset.pk,
            position,
            node.identifier,
            node.name,
            node.kind,
            node.role,
            node.content,
            node.enabled,
            node.injection_position,
            node.injection_depth,
            node.injection_order,
            list(node.injection_trigger),
            node.forbid_overrides,
            node.prefix,
            node.suffix,
        )
        for position, node in enumerate(nodes)
    ]
    if connection.vendor != "postgresql":
        PresetNode.objects.bulk_create(
            [PresetNode(**dict(zip(_NODE_COLUMNS, row, strict=True))) for row in rows]
        )
        return
    table = connection.ops.quote_name(PresetNode._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(c) for c in _NODE_COLUMNS)
    with connection.cursor() as cursor, cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row((*row[:11], json.dumps(row[11], ensure_ascii=False), *row[12:]))


def preset_activate(*, preset: Preset, by: Actor) -> None:
    """Make `preset` the server's only active preset."""
    with server_write(server_id=preset.server_id, stamps=(preset_cache.STAMP,), lock=True):
        Preset.objects.filter(server_id=preset.server_id, is_active=True).exclude(pk=preset.pk).update(
            is_active=False
        )
        Preset.objects.filter(pk=preset.pk).update(is_active=True, updated_at=timezone.now())
        AuditEvent.record(
            server=preset.server_id,
            actor=by,
            action=AuditAction.PRESET_ACTIVATE,
            target=preset,
        )
    preset.is_active = True


def preset_deactivate(*, preset: Preset, by: Actor) -> None:
    """Switch `preset` off: the server goes back to native assembly."""
    with server_write(server_id=preset.server_id, stamps=(preset_cache.STAMP,)):
        Preset.objects.filter(pk=preset.pk).update(is_active=False, updated_at=timezone.now())
        AuditEvent.record(
            server=preset.server_id,
            actor=by,
            action=AuditAction.PRESET_DEACTIVATE,
            target=preset,
        )
    preset.is_active = False


def preset_rename(*, preset: Preset, name: str, by: Actor) -> None:
    """Rename `preset`; raises PresetError for an empty name and PresetNameClash for a taken one."""
    new_name = clean_name(name)
    if not new_name:
        raise PresetError("A preset needs a name.")
    if new_name == preset.name:
        return
    if Preset.objects.filter(server_id=preset.server_id, name=new_name).exclude(pk=preset.pk).exists():
        raise PresetNameClash(new_name)
    old_name = preset.name
    try:
        with server_write(server_id=preset.server_id, stamps=(preset_cache.STAMP,)):
            Preset.objects.filter(pk=preset.pk).update(name=new_name, updated_at=timezone.now())
            preset.name = new_name
            AuditEvent.record(
                server=preset.server_id,
                actor=by,
                action=AuditAction.PRESET_RENAME,
                target=preset,
                detail={"from": old_name, "to": new_name},
            )
    except IntegrityError:  # another admin took the name between the check and the update
        preset.name = old_name
        raise PresetNameClash(new_name) from None


def preset_delete(*, preset: Preset, by: Actor) -> None:
    """Delete `preset` and its nodes. Deleting the active preset reverts the server to native assembly."""
    server_id = preset.server_id
    with server_write(server_id=server_id, stamps=(preset_cache.STAMP,)):
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.PRESET_DELETE,
            target=preset,
            detail={"was_active": preset.is_active},
        )
        preset.delete()


def preset_set_injection_style(*, preset: Preset, style: str, by: Actor) -> None:
    """Choose how the preset's depth injections are placed ("merge" or "standalone")."""
    if style not in InjectionStyle.values:
        raise PresetError("The depth-injection style must be “merge” or “standalone”.")
    with server_write(server_id=preset.server_id, stamps=(preset_cache.STAMP,)):
        Preset.objects.filter(pk=preset.pk).update(injection_style=style, updated_at=timezone.now())
        preset.injection_style = style
        version_services.record_version(
            preset=preset,
            kind="settings",
            reason=f"depth injections: {style}",
            by=by,
        )
        AuditEvent.record(
            server=preset.server_id,
            actor=by,
            action=AuditAction.PRESET_STYLE,
            target=preset,
            detail={"style": style},
        )


def node_set_enabled(*, node: PresetNode, enabled: bool, by: Actor) -> None:
    """Switch one node on or off; raises PresetError for comments."""
    if not node.switchable:
        raise PresetError("Comments cannot be switched on or off.")
    with server_write(server_id=node.preset.server_id, stamps=(preset_cache.STAMP,)):
        version_services.lock_preset(node.preset_id)  # first, as editor writes do: no lock-order deadlock
        PresetNode.objects.filter(pk=node.pk).update(enabled=enabled)
        changes: dict[str, object] = {"updated_at": timezone.now()}
        if node.identifier == "chatHistory" and node.preset.summary:
            # the summary's warning says whether the conversation is sent: keep it true
            summary = ImportSummary.from_dict(node.preset.summary)
            changes["summary"] = resummarize(summary, selectors.st_nodes(node.preset_id)).to_dict()
            node.preset.summary = changes["summary"]
        Preset.objects.filter(pk=node.preset_id).update(**changes)
        node.enabled = enabled
        version_services.record_version(
            preset=node.preset,
            kind="toggle",
            reason=f"switched “{node.name[:80]}” {'on' if enabled else 'off'}",
            by=by,
        )
        AuditEvent.record(
            server=node.preset.server_id,
            actor=by,
            action=AuditAction.PRESET_NODE_ENABLE if enabled else AuditAction.PRESET_NODE_DISABLE,
            target=node.preset,
            detail={"identifier": node.identifier, "name": node.name[:100]},
        )


def nodes_set_enabled(*, preset: Preset, node_ids: list[int], enabled: bool, by: Actor) -> int:
    """Switch many nodes of `preset` on or off at once (comments and chatHistory are left alone).

    Returns how many nodes changed.
    """
    with server_write(server_id=preset.server_id, stamps=(preset_cache.STAMP,)):
        version_services.lock_preset(preset.pk)  # first, as editor writes do: no lock-order deadlock
        changed = (
            PresetNode.objects.filter(preset=preset, pk__in=node_ids)
            .exclude(kind="comment")
            .exclude(identifier="chatHistory")
            .exclude(enabled=enabled)
            .update(enabled=enabled)
        )
        Preset.objects.filter(pk=preset.pk).update(updated_at=timezone.now())
        if changed:
            version_services.record_version(
                preset=preset,
                kind="toggle",
                reason=f"switched {changed} node{'s' * (changed != 1)} {'on' if enabled else 'off'}",
                by=by,
            )
        AuditEvent.record(
            server=preset.server_id,
            actor=by,
            action=AuditAction.PRESET_NODES_ENABLE if enabled else AuditAction.PRESET_NODES_DISABLE,
            target=preset,
            detail={"changed": changed},
        )
    return changed
