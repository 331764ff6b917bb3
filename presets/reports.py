"""Presets as JSON: the shapes the bot API and the `preset` command both answer with."""

from __future__ import annotations

from typing import Any, TypedDict

from engine import CompiledPreset

from .models import Preset
from .services import ImportResult


def import_report(result: ImportResult) -> dict[str, Any]:
    """What an import did, as one JSON object (the API's and the CLI's answer).

    The summary's fields (docs/import.md#the-import-summary) sit at the top level next to `preset_id`, `name`,
    `active`, `replaced` and `carried_over`.
    """
    return {
        "preset_id": result.preset.pk,
        "name": result.preset.name,
        "active": result.preset.is_active,
        "replaced": result.replaced,
        "carried_over": result.carried_over,
        **result.summary.to_dict(),
    }


class PresetListingJson(TypedDict):
    preset_id: int
    name: str
    active: bool
    shape: str
    nodes: int
    injection_style: str
    updated_at: str


class CompiledPresetJson(TypedDict):
    preset_id: int
    name: str
    injection_style: str
    settings: dict[str, Any]
    nodes: list[dict[str, Any]]


def preset_listing(preset: Preset) -> PresetListingJson:
    """One row of a preset list."""
    return {
        "preset_id": preset.pk,
        "name": preset.name,
        "active": preset.is_active,
        "shape": preset.shape,
        "nodes": preset.node_count,
        "injection_style": preset.injection_style,
        "updated_at": preset.updated_at.isoformat(),
    }


def compiled_json(compiled: CompiledPreset) -> CompiledPresetJson:
    """The compiled preset as JSON: settings and every node in prompt order."""
    return {
        "preset_id": compiled.preset_id,
        "name": compiled.name,
        "injection_style": compiled.injection_style,
        "settings": compiled.settings.to_dict(),
        "nodes": [compiled_node.node.to_dict() for compiled_node in compiled.nodes],
    }
