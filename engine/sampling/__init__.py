"""Sampler settings: read from a preset, combined with a server's choice, mapped to each provider.

Pure (no Django). Callers import from here, never from the modules inside.
"""

from ..vocabulary import PROVIDERS
from .mapping import Dropped, GenerationSettings, generation_settings, with_generation_settings
from .rules import PROVIDER_LABELS
from .settings import (
    MODE_LABELS,
    MODES,
    PRESET_KEYS,
    REASONING_EFFORTS,
    SETTING_NAMES,
    SamplerSettings,
    SamplingChoice,
    SamplingValueError,
    effective_settings,
    parse_server_value,
    sampler_settings_of,
)

__all__ = [
    "MODES",
    "MODE_LABELS",
    "PRESET_KEYS",
    "PROVIDERS",
    "PROVIDER_LABELS",
    "REASONING_EFFORTS",
    "SETTING_NAMES",
    "Dropped",
    "GenerationSettings",
    "SamplerSettings",
    "SamplingChoice",
    "SamplingValueError",
    "effective_settings",
    "generation_settings",
    "parse_server_value",
    "sampler_settings_of",
    "with_generation_settings",
]
