"""The preset editor's writes: edit, add, duplicate, delete and move nodes, and roll back to a version.

Every edit is one call here: it locks the preset, refuses a stale edit (optimistic concurrency: the
caller says which version it edited, and a newer one raises PresetConflict naming both), applies a
pure change from engine.editing, stores only the rows that changed (node ids stay stable), recounts
the summary, records a new version and an audit entry, and bumps the presets' cache stamp inside its
transaction (servers.writes.server_write).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings as django_settings
from django.db import connection
from django.db.models import F
from django.utils import timezone

from core.actors import Actor
from core.line_ends import as_typed
from engine import editing
from engine.st_format import ImportSummary, resummarize
from engine.st_format import PresetNode as StNode
from engine.versions import VersionDiff
from servers.audit_actions import AuditAction
from servers.models import AuditEvent
from servers.writes import server_write

from .. import cache as preset_cache
from .. import selectors
from ..models import InjectionStyle, Preset, PresetNode
from ..services import PresetError
from ..versions import selectors as versions
from ..versions import services as version_services

Entries = list[editing.Entry]
# Positions are shifted this far out of the way before a reorder, so the unique (preset, position)
# constraint never sees two rows on one place mid-update.
POSITION_SHIFT = 1_000_000


class PresetConflict(PresetError):
    """The preset changed since the version the edit was made on, in a way that touches the edit
    (the same node, or the order for a move); nothing was written. `diff` is what changed since."""

    def __init__(self, base: int, current: int, diff: VersionDiff) -> None:
        super().__init__(
            f"Someone else changed this preset while you were editing (you started from version {base}, "
            f"it is now at version {current}). Nothing was saved: review their changes, then edit again."
        )
        self.base = base
        self.current = current
        self.diff = diff


# What makes a concurrent change a conflict for each kind of edit: one that touches the same node
# (its fields, or its removal), or the order for a move. Edits elsewhere merge: nothing is lost.
def _touches_node(node_id: int) -> Callable[[VersionDiff, Entries], bool]:
    def touches(diff: VersionDiff, entries: Entries) -> bool:
        identifier = next((node.identifier for key, node in entries if key == node_id), None)
        return identifier is None or identifier in diff.changed or identifier in diff.removed

    return touches


def _touches_order(diff: VersionDiff, entries: Entries) -> bool:
    return bool(diff.moved or diff.added or diff.removed)


@dataclass(frozen=True, slots=True)
class EditResult:
    """What an edit stored: the new version number, the node it concerned, the importer's warnings."""

    version: int
    node_id: int | None = None
    warnings: tuple[str, ...] = ()
    changed: bool = True


def node_update(
    *,
    preset: Preset,
    node_id: int,
    values: Mapping[str, Any],
    base_version: int | None,
    by: Actor,
) -> EditResult:
    """Change one node's editable fields (engine.editing.EDITABLE_FIELDS) as the admin wrote them. A
    save that changes nothing records nothing (`EditResult.changed` is False); a text whose only
    difference is its line ends is the stored text (core/line_ends.py)."""
    found: dict[str, Any] = {}

    def change(entries: Entries) -> Entries:
        old = _node(entries, node_id)
        normalised = edited_node(old, values)
        found["warnings"], found["name"] = normalised.warnings, normalised.node.name
        return editing.replace_node(entries, node_id, normalised.node)

    result = _edit(
        preset,
        change,
        base_version=base_version,
        by=by,
        kind="edit",
        reason=lambda: f"edited “{found['name']}”",
        action=AuditAction.PRESET_NODE_EDIT,
        touches=_touches_node(node_id),
        record_unchanged=False,
    )
    return EditResult(
        version=result.version, node_id=node_id, warnings=found["warnings"], changed=result.changed
    )


def edited_node(old: StNode, values: Mapping[str, Any]) -> editing.NormalisedNode:
    """The node `old` with the editor's `values` applied, as node_update stores it (pure)."""
    typed = dict(values)
    if isinstance(typed.get("content"), str):
        typed["content"] = as_typed(typed["content"], stored=old.content)
    return _normalise({**_editable(old), **typed}, old)


def node_add(
    *,
    preset: Preset,
    values: Mapping[str, Any],
    after_id: int | None,
    base_version: int | None,
    by: Actor,
) -> EditResult:
    """Add a content node after the node `after_id` (at the end when None), enabled."""
    found: dict[str, Any] = {}

    def change(entries: Entries) -> Entries:
        normalised = editing.normalise_node(
            {"name": "New prompt", **values},
            identifier=editing.new_identifier(),
            marker=False,
            enabled=True,
            max_bytes=django_settings.PRESET_MAX_BYTES,
        )
        found["warnings"], found["node"] = normalised.warnings, normalised.node
        return editing.insert_after(entries, after_id, normalised.node)

    result = _edit(
        preset,
        change,
        base_version=base_version,
        by=by,
        kind="edit",
        reason=lambda: f"added “{found['node'].name}”",
        action=AuditAction.PRESET_NODE_ADD,
    )
    return EditResult(
        version=result.version, node_id=result.ids.get(found["node"].identifier), warnings=found["warnings"]
    )


def node_duplicate(*, preset: Preset, node_id: int, base_version: int | None, by: Actor) -> EditResult:
    """Copy a node right after itself (a new identifier; markers cannot be duplicated)."""
    found: dict[str, StNode] = {}

    def change(entries: Entries) -> Entries:
        result, found["copy"] = editing.duplicate(entries, node_id)
        return result

    result = _edit(
        preset,
        change,
        base_version=base_version,
        by=by,
        kind="edit",
        reason=lambda: f"duplicated “{found['copy'].name.removesuffix(' (copy)')}”",
        action=AuditAction.PRESET_NODE_DUPLICATE,
        touches=_touches_node(node_id),
    )
    return EditResult(version=result.version, node_id=result.ids.get(found["copy"].identifier))


def node_delete(*, preset: Preset, node_id: int, base_version: int | None, by: Actor) -> EditResult:
    """Delete a node (not the chat history)."""
    found: dict[str, StNode] = {}

    def change(entries: Entries) -> Entries:
        result, found["node"] = editing.delete(entries, node_id)
        return result

    result = _edit(
        preset,
        change,
        base_version=base_version,
        by=by,
        kind="edit",
        reason=lambda: f"deleted “{found['node'].name}”",
        action=AuditAction.PRESET_NODE_DELETE,
        touches=_touches_node(node_id),
    )
    return EditResult(version=result.version)


def node_move(
    *,
    preset: Preset,
    node_id: int,
    steps: int,
    base_version: int | None,
    by: Actor,
) -> EditResult:
    """Move a node `steps` places (negative: towards the top)."""
    found: dict[str, StNode] = {}

    def change(entries: Entries) -> Entries:
        found["node"] = _node(entries, node_id)
        return editing.move(entries, node_id, steps)

    result = _edit(
        preset,
        change,
        base_version=base_version,
        by=by,
        kind="edit",
        reason=lambda: f"moved “{found['node'].name}” {'up' if steps < 0 else 'down'}",
        action=AuditAction.PRESET_NODES_MOVE,
        touches=_touches_order,
    )
    return EditResult(version=result.version, node_id=node_id)


def nodes_reorder(*, preset: Preset, order: list[int], base_version: int | None, by: Actor) -> EditResult:
    """Put the nodes in the order of `order` (every node id exactly once)."""
    result = _edit(
        preset,
        lambda entries: editing.reorder(entries, order),
        base_version=base_version,
        by=by,
        kind="edit",
        reason=lambda: "reordered nodes",
        action=AuditAction.PRESET_NODES_REORDER,
        touches=_touches_order,
    )
    return EditResult(version=result.version)


def preset_rollback(*, preset: Preset, to: int, base_version: int | None = None, by: Actor) -> EditResult:
    """Make version `to`'s nodes and settings current again, as a new version. Raises VersionNotFound."""
    state = versions.version_state(preset, to)

    def change(entries: Entries) -> Entries:
        ids = {node.identifier: key for key, node in entries}
        return [(ids.get(node.identifier), node) for node in state.nodes]

    result = _edit(
        preset,
        change,
        base_version=base_version,
        by=by,
        kind="rollback",
        reason=lambda: f"rolled back to version {to}",
        action=AuditAction.PRESET_ROLLBACK,
        settings=state.settings,
    )
    return EditResult(version=result.version)


# --- the one shape every edit shares ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Applied:
    version: int
    ids: dict[str, int]  # identifier -> node id after the edit
    changed: bool = True


def _edit(
    preset: Preset,
    change: Callable[[Entries], Entries],
    *,
    base_version: int | None,
    by: Actor,
    kind: str,
    reason: Callable[[], str],
    action: AuditAction,
    settings: Mapping[str, Any] | None = None,
    touches: Callable[[VersionDiff, Entries], bool] | None = None,
    record_unchanged: bool = True,
) -> _Applied:
    try:
        with server_write(server_id=preset.server_id, stamps=(preset_cache.STAMP,)) as write:
            current = version_services.lock_preset(preset.pk)
            old = _entries(preset.pk)
            if base_version is not None and base_version != current:
                _check_concurrent(preset, base_version, current, old, touches)
            new = change(old)
            if not record_unchanged and new == old:
                write.stamps.clear()  # nothing written: every cached form stays good
                return _Applied(version=current, ids={}, changed=False)
            ids = _sync_nodes(preset.pk, old, new)
            nodes = [node for _, node in new]
            row = Preset.objects.only("summary", "settings", "injection_style").get(pk=preset.pk)
            fields: dict[str, Any] = {"node_count": len(nodes), "updated_at": timezone.now()}
            if row.summary:
                fields["summary"] = resummarize(ImportSummary.from_dict(row.summary), nodes).to_dict()
            if settings is not None:
                fields["settings"] = {k: v for k, v in settings.items() if k != "injection_style"}
                if settings.get("injection_style") in InjectionStyle.values:
                    fields["injection_style"] = settings["injection_style"]
            Preset.objects.filter(pk=preset.pk).update(**fields)
            for name, value in fields.items():
                setattr(preset, name, value)
            version = version_services.record_version(
                preset=preset, kind=kind, reason=reason(), by=by, nodes=nodes
            )
            AuditEvent.record(
                server=preset.server_id,
                actor=by,
                action=action,
                target=preset,
                detail={"version": version.number, "reason": version.reason},
            )
    except editing.EditRefused as exc:
        raise PresetError(exc.message) from None
    return _Applied(version=version.number, ids=ids)


def _check_concurrent(
    preset: Preset,
    base: int,
    current: int,
    entries: Entries,
    touches: Callable[[VersionDiff, Entries], bool] | None,
) -> None:
    if base > current:
        raise PresetError("This page is out of date: reload it and make the change again.")
    try:
        since = versions.diff(preset, base, current)
    except versions.VersionNotFound:
        raise PresetError("This page is out of date: reload it and make the change again.") from None
    if touches is None or touches(since, entries):
        raise PresetConflict(base, current, since)


def _entries(preset_id: int) -> Entries:
    rows = (
        PresetNode.objects.filter(preset_id=preset_id)
        .order_by("position")
        .values_list("pk", *selectors.ST_NODE_FIELDS)
    )
    return [(row[0], selectors.st_node_from_row(row[1:])) for row in rows]


def _sync_nodes(preset_id: int, old: Entries, new: Entries) -> dict[str, int]:
    """Write only what differs between the stored rows (`old`) and `new`; identifier -> id after."""
    kept = {key for key, _ in new if key is not None}
    gone = [key for key, _ in old if key not in kept]
    if gone:
        PresetNode.objects.filter(preset_id=preset_id, pk__in=gone).delete()
    old_at = {key: (position, node) for position, (key, node) in enumerate(old)}
    placed = [
        (position, key)
        for position, (key, _) in enumerate(new)
        if key is not None and old_at[key][0] != position
    ]
    if placed:
        # Rows that change place step out of the way first, so (preset, position) stays unique.
        PresetNode.objects.filter(pk__in=[key for _, key in placed]).update(
            position=F("position") + POSITION_SHIFT
        )
        _execute_many(f"UPDATE {_TABLE} SET position = %s WHERE id = %s", placed)  # noqa: S608 (our names)
    changed = [
        (*_column_values(node), key) for key, node in new if key is not None and old_at[key][1] != node
    ]
    if changed:
        assignments = ", ".join(
            f"{connection.ops.quote_name(name)} = %s" for name in selectors.ST_NODE_FIELDS
        )
        _execute_many(f"UPDATE {_TABLE} SET {assignments} WHERE id = %s", changed)  # noqa: S608 (our names)
    added = [
        PresetNode(preset_id=preset_id, position=position, **_columns(node))
        for position, (key, node) in enumerate(new)
        if key is None
    ]
    if added:
        PresetNode.objects.bulk_create(added)
    return dict(PresetNode.objects.filter(preset_id=preset_id).values_list("identifier", "pk"))


_TABLE = connection.ops.quote_name(PresetNode._meta.db_table)


def _execute_many(sql: str, rows: list[tuple[Any, ...]]) -> None:
    """One statement over many rows (bulk_update's CASE expressions cost seconds on big presets)."""
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _column_values(node: StNode) -> tuple[Any, ...]:
    values = _columns(node)
    values["injection_trigger"] = json.dumps(values["injection_trigger"], ensure_ascii=False)
    return tuple(values[name] for name in selectors.ST_NODE_FIELDS)


def _columns(node: StNode) -> dict[str, Any]:
    values = {name: getattr(node, name) for name in selectors.ST_NODE_FIELDS}
    values["injection_trigger"] = list(node.injection_trigger)
    return values


def _node(entries: Entries, node_id: int) -> StNode:
    for key, node in entries:
        if key == node_id:
            return node
    raise editing.EditRefused("That node is no longer in this preset.")


def _editable(node: StNode) -> dict[str, Any]:
    values = {name: getattr(node, name) for name in editing.EDITABLE_FIELDS}
    values["injection_trigger"] = list(node.injection_trigger)
    return values


def _normalise(values: Mapping[str, Any], old: StNode) -> editing.NormalisedNode:
    normalised = editing.normalise_node(
        values,
        identifier=old.identifier,
        marker=old.kind == "marker",
        enabled=old.enabled,
        max_bytes=django_settings.PRESET_MAX_BYTES,
    )
    # Legacy blocks keep the text around them; the editor does not offer it (SillyTavern has none).
    if old.prefix or old.suffix:
        return editing.NormalisedNode(
            node=replace(normalised.node, prefix=old.prefix, suffix=old.suffix), warnings=normalised.warnings
        )
    return normalised
