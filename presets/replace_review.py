"""What a re-upload would change before it replaces a preset (the clash → diff → confirm flow):
the upload is parsed, the admin's switches are carried over as the replacement would
(docs/import.md#the-import-summary), and the result is compared with the preset's current version. Nothing is
written."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from engine.st_format import parse_preset
from engine.versions import VersionDiff, diff_versions

from .models import Preset
from .services import carry_choices_over
from .versions import selectors as versions


@dataclass(frozen=True, slots=True)
class ReplaceReview:
    """The preset a re-upload would replace, what would change, and how many switches carry over."""

    preset: Preset
    diff: VersionDiff
    carried_over: int
    nodes: int


def review_replace(*, preset: Preset, raw: bytes, filename: str) -> ReplaceReview:
    """Compare the upload (with the carried-over switches) with the preset's current version.
    Raises ImportRefused as an import would."""
    parsed = parse_preset(raw, filename=filename, max_bytes=settings.PRESET_MAX_BYTES)
    nodes, carried = carry_choices_over(preset, parsed.nodes)
    current = versions.version_state(preset, preset.version)
    diff = diff_versions(
        current.nodes,
        nodes,
        settings_before=current.settings,
        settings_after={**parsed.settings.to_dict(), "injection_style": preset.injection_style},
    )
    return ReplaceReview(preset=preset, diff=diff, carried_over=carried, nodes=len(nodes))
