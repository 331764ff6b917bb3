"""Preset versions, stored and read back: every write that changes a preset's nodes or settings
records an immutable version (engine.versions says how it is stored and why).

`record_version` runs inside the caller's transaction; it locks the preset row, so two writers
are numbered one after the other. Reads rebuild a version's nodes from its manifest and blobs.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q

from engine.st_format import PresetNode as StNode
from engine.versions import (
    Manifest,
    VersionDiff,
    blob_digest,
    compress,
    diff_versions,
    enabled_count,
    export_preset,
    node_blob,
    node_from_blob,
)
from servers.users import User

from . import selectors
from .models import ChannelPreset, Preset, PresetNodeBlob, PresetVersion

REASON_MAX_LENGTH = 200


class VersionNotFound(LookupError):
    """The preset has no version with that number; `message` is one sentence."""

    def __init__(self, number: int) -> None:
        self.message = f"This preset has no version {number}."
        super().__init__(self.message)


@dataclass(frozen=True, slots=True)
class VersionState:
    """A version's content: its nodes in prompt order and its settings."""

    number: int
    nodes: tuple[StNode, ...]
    settings: dict[str, Any]


def snapshot_settings(preset: Preset) -> dict[str, Any]:
    """The preset's version-tracked settings: the prompt-shaping ones and the injection style."""
    return {**selectors.prompt_settings(preset).to_dict(), "injection_style": preset.injection_style}


def lock_preset(preset_id: int) -> int:
    """Lock the preset row until the transaction ends; its current version number."""
    return Preset.objects.select_for_update().filter(pk=preset_id).values_list("version", flat=True).get()


def record_version(
    *,
    preset: Preset,
    kind: str,
    reason: str,
    by: User | None = None,
    actor_label: str = "",
    nodes: Sequence[StNode] | None = None,
    source_text: str | None = None,
) -> PresetVersion:
    """Store the preset's current state (its stored nodes unless `nodes` is given) as its next version.

    Call inside a transaction. `source_text` (imports and replacements) keeps the upload the
    version came from, so a later download of it carries the file's other settings.
    """
    current = lock_preset(preset.pk)
    if nodes is None:
        nodes = selectors.st_nodes(preset.pk)
    entries = _store_blobs(preset.pk, nodes)
    user = by if getattr(by, "is_authenticated", False) else None
    label = actor_label or (user.get_username() if user else "system")
    version = PresetVersion.objects.create(
        preset=preset,
        number=current + 1,
        kind=kind,
        reason=reason[:REASON_MAX_LENGTH],
        created_by=user,
        actor_label=label[:150],
        manifest=Manifest(
            entries=tuple(zip(entries, (n.enabled for n in nodes), strict=True)),
            settings=snapshot_settings(preset),
        ).encode(),
        node_count=len(nodes),
        enabled_count=enabled_count(nodes),
        shape=preset.shape,
        source=compress(source_text.encode()) if source_text is not None else None,
    )
    Preset.objects.filter(pk=preset.pk).update(version=version.number)
    preset.version = version.number
    return version


def adopt_history(*, old_id: int, new: Preset) -> None:
    """Give the preset replacing `old_id` its versions, node blobs and channel uses (in the caller's
    transaction, before the old row is deleted), so the history runs on across a re-upload."""
    PresetVersion.objects.filter(preset_id=old_id).update(preset=new)
    PresetNodeBlob.objects.filter(preset_id=old_id).update(preset=new)
    ChannelPreset.objects.filter(preset_id=old_id).update(preset=new)
    number = (
        PresetVersion.objects.filter(preset=new).order_by("-number").values_list("number", flat=True).first()
    )
    Preset.objects.filter(pk=new.pk).update(version=number or 0)
    new.version = number or 0


def _store_blobs(preset_id: int, nodes: Sequence[StNode]) -> list[int]:
    """The blob id of every node, storing the blobs this preset does not have yet."""
    blobs = [node_blob(node) for node in nodes]
    digests = [blob_digest(blob) for blob in blobs]
    known = dict(
        PresetNodeBlob.objects.filter(preset_id=preset_id, digest__in=set(digests)).values_list(
            "digest", "pk"
        )
    )
    missing = {}
    for digest, blob in zip(digests, blobs, strict=True):
        if digest not in known and digest not in missing:
            missing[digest] = PresetNodeBlob(preset_id=preset_id, digest=digest, data=compress(blob))
    if missing:
        PresetNodeBlob.objects.bulk_create(missing.values())
        known.update(
            PresetNodeBlob.objects.filter(preset_id=preset_id, digest__in=list(missing)).values_list(
                "digest", "pk"
            )
        )
    return [known[digest] for digest in digests]


# --- reads -------------------------------------------------------------------------------------


def versions_of(preset: Preset) -> list[PresetVersion]:
    """The preset's versions, newest first, without their stored data."""
    return list(preset.versions.defer("manifest", "source").order_by("-number"))


def version_row(preset: Preset, number: int) -> PresetVersion:
    """One version row (stored upload deferred); raises VersionNotFound."""
    row = preset.versions.defer("source").filter(number=number).first()
    if row is None:
        raise VersionNotFound(number)
    return row


def version_state(preset: Preset, number: int) -> VersionState:
    """A version's nodes and settings; raises VersionNotFound."""
    manifest = Manifest.decode(bytes(version_row(preset, number).manifest))
    ids = {blob_id for blob_id, _ in manifest.entries}
    data = dict(PresetNodeBlob.objects.filter(pk__in=ids).values_list("pk", "data"))
    nodes = tuple(
        node_from_blob(bytes(data[blob_id]), enabled=enabled) for blob_id, enabled in manifest.entries
    )
    return VersionState(number=number, nodes=nodes, settings=manifest.settings)


def diff(preset: Preset, from_number: int, to_number: int) -> VersionDiff:
    """What changed from one version of the preset to another; raises VersionNotFound."""
    before, after = version_state(preset, from_number), version_state(preset, to_number)
    return diff_versions(
        before.nodes, after.nodes, settings_before=before.settings, settings_after=after.settings
    )


def export_version(preset: Preset, number: int) -> str:
    """A version as SillyTavern preset JSON (see engine.versions.export); raises VersionNotFound."""
    state = version_state(preset, number)
    origin = (
        preset.versions.filter(number__lte=number)
        .filter(~Q(source=None))
        .only("source", "shape")
        .order_by("-number")
        .first()
    )
    stored_text = zlib.decompress(bytes(origin.source)).decode() if origin is not None else ""
    return export_preset(
        state.nodes,
        settings=state.settings,
        stored_text=stored_text,
        shape=origin.shape if origin is not None else preset.shape,
    )


def version_listing(version: PresetVersion) -> dict[str, Any]:
    """One version as the command line prints it."""
    return {
        "version": version.number,
        "created_at": _iso(version.created_at),
        "reason": version.reason,
        "nodes": version.node_count,
        "enabled": version.enabled_count,
    }


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
