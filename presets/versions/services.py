"""Preset versions stored: every write that changes a preset's nodes or settings records an
immutable version (engine.versions says how it is stored and why).

`record_version` runs inside the caller's transaction; it locks the preset row, so two writers
are numbered one after the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.actors import Actor, label_of, user_of
from engine.st_format import PresetNode as StNode
from engine.versions import Manifest, blob_digest, compress, enabled_count, node_blob

from .. import selectors
from ..models import ChannelPreset, Preset, PresetNodeBlob, PresetVersion

REASON_MAX_LENGTH = 200


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
    by: Actor,
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
    version = PresetVersion.objects.create(
        preset=preset,
        number=current + 1,
        kind=kind,
        reason=reason[:REASON_MAX_LENGTH],
        created_by=user_of(by),
        actor_label=label_of(by),
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
