"""Preset versions read back: the list, one version's nodes and settings rebuilt from its manifest
and blobs, the diff between two versions, and a version exported as SillyTavern JSON."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q

from core.errors import UserError
from engine.st_format import PresetNode as StNode
from engine.versions import Manifest, VersionDiff, diff_versions, export_preset, node_from_blob

from ..models import Preset, PresetNodeBlob, PresetVersion


class VersionNotFound(UserError, LookupError):
    """The preset has no version with that number; `message` is one sentence."""

    def __init__(self, number: int) -> None:
        super().__init__(f"This preset has no version {number}.")


@dataclass(frozen=True, slots=True)
class VersionState:
    """A version's content: its nodes in prompt order and its settings."""

    number: int
    nodes: tuple[StNode, ...]
    settings: dict[str, Any]


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
    stored_text = (
        zlib.decompress(bytes(origin.source)).decode()
        if origin is not None and origin.source is not None
        else ""
    )
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
