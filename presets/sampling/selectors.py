"""Reads for sampler settings: a server's choice, a preset's settings, and what they send per provider."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.sampling import (
    MODE_LABELS,
    PROVIDER_LABELS,
    PROVIDERS,
    SETTING_NAMES,
    GenerationSettings,
    SamplerSettings,
    SamplingChoice,
    generation_settings,
)

from ..models import Preset, ServerSampling


def sampling_choice(server_id: int) -> SamplingChoice:
    """The server's choice from the database; the default (the preset's sampling, OpenAI) without a row."""
    row = ServerSampling.objects.filter(server_id=server_id).first()
    if row is None:
        return SamplingChoice()
    return SamplingChoice.from_dict({"mode": row.mode, "provider": row.provider, "values": row.values})


def active_preset(server: Any) -> Preset | None:
    """The server's active preset (stored text deferred), or None."""
    return server.presets.filter(is_active=True).defer("stored_text").first()


def preset_sampling(preset: Preset) -> SamplerSettings:
    """The sampler settings stored with the preset."""
    return SamplerSettings.from_dict(preset.sampling)


@dataclass(frozen=True, slots=True)
class SettingRow:
    """One line of the sampling table: the preset's value, the server's, and the one used."""

    name: str
    preset: Any
    server: Any
    effective: Any


@dataclass(frozen=True, slots=True)
class SamplingPanel:
    """What the preset page shows about sampling for one server and preset (or none: native)."""

    choice: SamplingChoice
    mode_label: str
    provider_label: str
    rows: tuple[SettingRow, ...]
    effective: SamplerSettings
    generation: GenerationSettings  # for the server's provider

    @property
    def params(self) -> list[tuple[str, Any]]:
        return list(self.generation.params.items())


def sampling_panel(choice: SamplingChoice, preset: Preset | None) -> SamplingPanel:
    """The sampling table for the page: every setting either side sets, and what the server's
    provider receives."""
    preset_values = preset_sampling(preset) if preset is not None else None
    effective = choice.effective(preset_values)
    from_preset = preset_values.to_dict() if preset_values is not None else {}
    from_server = choice.values.to_dict()
    used = effective.to_dict()
    rows = tuple(
        SettingRow(name, from_preset.get(name), from_server.get(name), used.get(name))
        for name in SETTING_NAMES
        if name in from_preset or name in from_server
    )
    provider = choice.provider if choice.provider in PROVIDERS else "openai"
    return SamplingPanel(
        choice=choice,
        mode_label=MODE_LABELS[choice.mode],
        provider_label=PROVIDER_LABELS[provider],
        rows=rows,
        effective=effective,
        generation=generation_settings(effective, provider),
    )


def settings_per_provider(choice: SamplingChoice, preset: Preset | None) -> dict[str, Any]:
    """The command line's answer: the choice, and the effective parameters for every provider."""
    effective = choice.effective(preset_sampling(preset) if preset is not None else None)
    out: dict[str, Any] = {
        **choice.to_dict(),
        "preset": preset.name if preset is not None else None,
        "effective": effective.to_dict(),
        "providers": {},
    }
    for provider in PROVIDERS:
        result = generation_settings(effective, provider)
        out["providers"][provider] = {**result.to_dict(), "adjusted": list(result.adjusted)}
    return out
