"""Writes for lorebooks. Each runs in one transaction (servers.writes.server_write), leaves an audit
entry and bumps the server's World Info cache stamp inside that transaction, before it commits.

`by` is who acts: a dashboard user, or an agent (`core.actors`: "api token tk_…", "cli").
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection

from core.actors import Actor, user_of
from core.errors import UserError
from core.names import clean_name
from engine.worldinfo import (
    STRATEGIES,
    Entry,
    LorebookSummary,
    WorldInfoSettings,
    book_to_bytes,
    compile_book,
    parse_lorebook,
    paused_gc,
)
from servers.audit_actions import AuditAction
from servers.imports import NameClash, OnClash, place_import
from servers.models import AuditEvent, Server
from servers.writes import server_write

from . import cache as wi_cache
from . import selectors
from .models import (
    NAME_MAX_LENGTH,
    SETTING_FIELDS,
    CompiledLorebook,
    Lorebook,
    LorebookEntry,
    WorldInfoSettingsRow,
)

FALLBACK_NAME = "Untitled lorebook"


class LorebookError(UserError):
    """A write that cannot be done as asked; `message` is one sentence for the user."""


class LorebookNameClash(NameClash, LorebookError):
    """An import would reuse a name already taken on the server."""

    kind = "lorebook"


@dataclass(frozen=True)
class ImportResult:
    """What an import stored."""

    lorebook: Lorebook
    summary: LorebookSummary
    replaced: bool


def lorebook_import(
    *,
    server: Server,
    raw: bytes,
    filename: str,
    name: str | None = None,
    on_clash: OnClash = "ask",
    activate: bool = True,
    by: Actor,
) -> ImportResult:
    """Parse and store an upload. Raises LorebookRefused (not a lorebook / too large) or LorebookNameClash.

    A replacement keeps the replaced lorebook's active flag. Nothing is written on any error.
    """
    parsed = parse_lorebook(
        raw,
        filename=filename,
        max_bytes=settings.LOREBOOK_MAX_BYTES,
        max_entries=settings.LOREBOOK_MAX_ENTRIES,
    )
    wanted = (
        clean_name(name, max_length=NAME_MAX_LENGTH)
        or clean_name(parsed.name, max_length=NAME_MAX_LENGTH)
        or FALLBACK_NAME
    )
    with server_write(server_id=server.pk, stamps=(wi_cache.STAMP,)):
        placement = place_import(
            server_id=server.pk,
            rows=server.lorebooks.all(),
            wanted=wanted,
            on_clash=on_clash,
            max_length=NAME_MAX_LENGTH,
            clash=LorebookNameClash,
        )
        wanted, replaced, is_active = placement.name, placement.replaces is not None, activate
        if placement.replaces is not None:
            is_active = placement.replaces.is_active
            placement.replaces.delete()
        user = user_of(by)
        lorebook = Lorebook.objects.create(
            server=server,
            name=wanted,
            is_active=is_active,
            original_text=parsed.text,
            summary=parsed.summary.to_dict(),
            source=parsed.summary.source,
            entry_count=len(parsed.entries),
            source_filename=filename[:255],
            created_by=user,
        )
        with paused_gc():
            _insert_entries(lorebook, parsed.entries)
            _store_compiled(lorebook, parsed.entries)
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.LOREBOOK_REPLACE if replaced else AuditAction.LOREBOOK_IMPORT,
            target=lorebook,
            detail={"entries": len(parsed.entries), "active": is_active},
        )
    return ImportResult(lorebook=lorebook, summary=parsed.summary, replaced=replaced)


def _insert_entries(lorebook: Lorebook, entries: tuple[Entry, ...]) -> None:
    """Store the entries with one statement: `COPY` on PostgreSQL, else one INSERT run over every row
    (a 10 000-entry book in a fraction of a second, where bulk_create spent seconds on the ORM and,
    on PostgreSQL, on quoting the entries' JSON into arrays)."""
    rows = (
        (
            lorebook.pk,
            index,
            e.uid,
            e.comment,
            json.dumps(list(e.key)),
            e.position,
            e.order,
            e.enabled,
            e.constant,
            json.dumps(e.to_st()),
        )
        for index, e in enumerate(entries)
    )
    quote = connection.ops.quote_name
    table = quote(LorebookEntry._meta.db_table)
    column_of = {field.name: field.column for field in LorebookEntry._meta.concrete_fields}
    columns = ", ".join(quote(column_of[f]) for f in _COLUMNS)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(_COLUMNS))
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(rows))  # noqa: S608


_COLUMNS = ("lorebook", "index", "uid", "comment", "keys", "position", "order", "enabled", "constant", "data")


def _store_compiled(lorebook: Lorebook, entries: Iterable[Entry]) -> None:
    """Compile the book once for this version of its entries and keep the result for every process."""
    blob = book_to_bytes(compile_book(lorebook.name, tuple(entries)))
    CompiledLorebook.objects.update_or_create(
        lorebook=lorebook, defaults={"format": selectors.COMPILED_FORMAT, "data": blob, "switched": {}}
    )


def lorebook_set_active(*, lorebook: Lorebook, active: bool, by: Actor) -> None:
    """Switch a lorebook on or off for the server's assemblies."""
    with server_write(server_id=lorebook.server_id, stamps=(wi_cache.STAMP,)):
        Lorebook.objects.filter(pk=lorebook.pk).update(is_active=active)
        lorebook.is_active = active
        AuditEvent.record(
            server=lorebook.server_id,
            actor=by,
            action=AuditAction.LOREBOOK_ACTIVATE if active else AuditAction.LOREBOOK_DEACTIVATE,
            target=lorebook,
        )


def lorebook_delete(*, lorebook: Lorebook, by: Actor) -> None:
    """Delete a lorebook and its entries."""
    server_id = lorebook.server_id
    with server_write(server_id=server_id, stamps=(wi_cache.STAMP,)):
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.LOREBOOK_DELETE,
            target=lorebook,
            detail={"name": lorebook.name},
        )
        lorebook.delete()


def entries_set_enabled(
    *,
    lorebook: Lorebook,
    entry_ids: Iterable[int],
    enabled: bool,
    by: Actor,
) -> int:
    """Enable or disable entries of a lorebook (one or many); returns how many changed."""
    with server_write(server_id=lorebook.server_id, stamps=(wi_cache.STAMP,)):
        rows = list(
            LorebookEntry.objects.select_for_update()
            .filter(lorebook=lorebook, pk__in=list(entry_ids))
            .exclude(enabled=enabled)
            .values_list("pk", "uid", "data")
        )
        if rows:
            # One statement over many rows: bulk_update's CASE expressions took 20 s for 10 000 entries.
            changed = [(enabled, json.dumps({**data, "disable": not enabled}), pk) for pk, _, data in rows]
            with connection.cursor() as cursor:
                cursor.executemany(_SET_ENABLED, changed)
            Lorebook.objects.filter(pk=lorebook.pk).update(summary=_recount(lorebook))
            _store_switched(lorebook, {uid for _, uid, _ in rows}, enabled)
            AuditEvent.record(
                server=lorebook.server_id,
                actor=by,
                action=AuditAction.LOREBOOK_ENTRIES_ENABLE
                if enabled
                else AuditAction.LOREBOOK_ENTRIES_DISABLE,
                target=lorebook,
                detail={"entries": [uid for _, uid, _ in rows]},
            )
    return len(rows)


_SET_ENABLED = "UPDATE {table} SET {enabled} = %s, {data} = %s WHERE {pk} = %s".format(  # noqa: S608 (our names)
    table=connection.ops.quote_name(LorebookEntry._meta.db_table),
    enabled=connection.ops.quote_name("enabled"),
    data=connection.ops.quote_name("data"),
    pk=connection.ops.quote_name("id"),
)


def _store_switched(lorebook: Lorebook, uids: set[int], enabled: bool) -> None:
    """Record the switch beside the stored compiled book (applied when a process loads it); a book
    without a compiled form gets one from the rows already updated."""
    compiled = CompiledLorebook.objects.select_for_update().filter(lorebook=lorebook).only("switched").first()
    if compiled is None:
        _store_compiled(lorebook, selectors.engine_entries(lorebook.pk))
        return
    compiled.switched = {**compiled.switched, **dict.fromkeys(map(str, uids), enabled)}
    compiled.save(update_fields=["switched"])


def _recount(lorebook: Lorebook) -> dict[str, Any]:
    summary = dict(lorebook.summary)
    summary["enabled"] = LorebookEntry.objects.filter(lorebook=lorebook, enabled=True).count()
    return summary


def settings_update(*, server: Server, changes: dict[str, Any], by: Actor) -> WorldInfoSettings:
    """Change some of the server's World Info settings; raises LorebookError on a bad value."""
    clean = _clean_settings(changes)
    with server_write(server_id=server.pk, stamps=(wi_cache.STAMP,)):
        row, _ = WorldInfoSettingsRow.objects.select_for_update().get_or_create(server=server)
        before = {name: getattr(row, name) for name in clean}
        for name, value in clean.items():
            setattr(row, name, value)
        row.save()
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.LOREBOOK_SETTINGS,
            detail={"before": before, "after": clean},
        )
    return row.as_settings()


_LIMITS = {
    "scan_depth": (0, 1000),
    "budget_percent": (1, 100),
    "budget_cap": (0, 10_000_000),
    "max_recursion": (0, 100),
    "min_activations": (0, 1000),
    "min_activations_depth_max": (0, 1000),
    "context_size": (1, 10_000_000),
}
_BOOLEANS = ("recursive", "case_sensitive", "match_whole_words", "group_scoring", "include_names")
_LABELS = {
    "scan_depth": "The scan depth",
    "budget_percent": "The budget percentage",
    "budget_cap": "The budget cap",
    "max_recursion": "The maximum recursion steps",
    "min_activations": "The minimum activations",
    "min_activations_depth_max": "The minimum-activations depth cap",
    "context_size": "The context size",
}


def _clean_settings(changes: dict[str, Any]) -> dict[str, Any]:
    clean: dict[str, Any] = {}
    for name, value in changes.items():
        if name not in SETTING_FIELDS:
            raise LorebookError(f"There is no World Info setting called {name}.")
        if name in _BOOLEANS:
            if not isinstance(value, bool):
                raise LorebookError(f"The {name.replace('_', ' ')} setting must be on or off.")
        elif name == "strategy":
            if value not in STRATEGIES:
                raise LorebookError("The insertion strategy must be character_first, global_first or evenly.")
        else:
            low, high = _LIMITS[name]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise LorebookError(f"{_LABELS[name]} must be a whole number from {low} to {high}.")
        clean[name] = value
    return clean


def timed_state_save(*, server_id: int, channel: str, state: dict[str, Any]) -> None:
    """Keep a channel's World Info timed effects (sticky, cooldown, delay; docs/worldinfo.md#timed-effects)
    for its next assembly: shared cache only, a day's lifetime, no audit (it is the bot's conversation
    state)."""
    wi_cache.write_state(server_id, channel, state)
