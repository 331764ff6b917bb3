"""A preset's sampler settings as SillyTavern stores them, and how a server's choice combines them.

Pure: no Django, no I/O. Values are kept as the file wrote them (a string where a number belongs
stays a string); the provider mapping decides what is sent and says why anything is not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from ..errors import EngineError

# The chat-completion names SillyTavern writes into a preset, in the order the table shows them.
SETTING_NAMES = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "frequency_penalty",
    "presence_penalty",
    "repetition_penalty",
    "top_a",
    "openai_max_tokens",
    "seed",
    "reasoning_effort",
)

# Text-completion exports name some of the same samplers differently; the chat name wins when a file
# has both.
ALIASES = {
    "temp": "temperature",
    "rep_pen": "repetition_penalty",
    "freq_pen": "frequency_penalty",
    "presence_pen": "presence_penalty",
    "genamt": "openai_max_tokens",
}

# Every top-level key of a preset file the sampler settings are read from.
PRESET_KEYS = (*SETTING_NAMES, *ALIASES)

REASONING_EFFORTS = ("auto", "min", "low", "medium", "high", "max")

MODES = ("preset", "server", "merged")
MODE_LABELS = {
    "preset": "The preset's sampling",
    "server": "The server's own values",
    "merged": "The preset's, with the server's values winning per field",
}

# What SillyTavern's own controls allow, checked when a server admin types a value in.
_FLOAT_RANGES: dict[str, tuple[float, float]] = {
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "min_p": (0.0, 1.0),
    "frequency_penalty": (-2.0, 2.0),
    "presence_penalty": (-2.0, 2.0),
    "repetition_penalty": (0.0, 2.0),
    "top_a": (0.0, 1.0),
}
_INT_MINIMUMS = {"top_k": 0, "openai_max_tokens": 1, "seed": -1}
_INT_MAXIMUM = 2**53  # beyond this a JSON number is no longer a whole number anyone meant


class SamplingValueError(EngineError, ValueError):
    """A server value that cannot be stored; `message` is one sentence for the user."""


@dataclass(frozen=True, slots=True)
class SamplerSettings:
    """The sampler settings a preset (or a server) sets; None means not set."""

    temperature: Any = None
    top_p: Any = None
    top_k: Any = None
    min_p: Any = None
    frequency_penalty: Any = None
    presence_penalty: Any = None
    repetition_penalty: Any = None
    top_a: Any = None
    openai_max_tokens: Any = None
    seed: Any = None
    reasoning_effort: Any = None

    def to_dict(self) -> dict[str, Any]:
        """The settings that are set, by SillyTavern name, in table order."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> SamplerSettings:
        """Settings from `to_dict()` output; unknown keys are ignored."""
        if not d:
            return cls()
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def overridden_by(self, other: SamplerSettings) -> SamplerSettings:
        """These settings with every field `other` sets replaced by its value."""
        return replace(self, **other.to_dict())


@dataclass(frozen=True, slots=True)
class SamplingChoice:
    """A server's choice (mode, the provider it sends to, its own values); the default sends the preset's."""

    mode: str = "preset"
    provider: str = "openai"
    values: SamplerSettings = SamplerSettings()

    def effective(self, preset: SamplerSettings | None) -> SamplerSettings:
        """The settings sent with this preset's (None: native assembly) under this choice."""
        return effective_settings(self.mode, preset, self.values)

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "provider": self.provider, "values": self.values.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SamplingChoice:
        mode = d.get("mode")
        return cls(
            mode=mode if isinstance(mode, str) and mode in MODES else "preset",
            provider=str(d.get("provider") or "openai"),
            values=SamplerSettings.from_dict(d.get("values")),
        )


def sampler_settings_of(data: Mapping[str, Any]) -> SamplerSettings:
    """The sampler settings in a preset file's top-level object (chat names, then text-completion
    aliases for the ones not set); JSON null counts as not set."""
    values: dict[str, Any] = {}
    for alias, name in ALIASES.items():
        if data.get(alias) is not None:
            values[name] = data[alias]
    for name in SETTING_NAMES:
        if data.get(name) is not None:
            values[name] = data[name]
    return SamplerSettings(**values)


def effective_settings(mode: str, preset: SamplerSettings | None, server: SamplerSettings) -> SamplerSettings:
    """What a server sends under its choice: the preset's settings, its own, or the preset's with its
    own winning per field. Without a preset (native assembly) the server's values are all there is."""
    if mode == "server" or preset is None:
        return server if mode != "preset" else SamplerSettings()
    if mode == "merged":
        return preset.overridden_by(server)
    return preset


def is_number(value: Any) -> bool:
    """True for a finite JSON number (booleans are not numbers here)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def parse_server_value(name: str, text: str) -> Any:
    """A value typed by an admin (`NAME=VALUE` on the command line, a form field), checked against
    SillyTavern's own ranges; raises SamplingValueError with one sentence."""
    if name not in SETTING_NAMES:
        raise SamplingValueError(f"{name!r} is not a sampler setting: use one of {', '.join(SETTING_NAMES)}.")
    text = text.strip()
    if name == "reasoning_effort":
        if text not in REASONING_EFFORTS:
            raise SamplingValueError(f"reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}.")
        return text
    try:
        number = float(text)
    except ValueError:
        raise SamplingValueError(f"{name} must be a number, not {text!r}.") from None
    if not math.isfinite(number):
        raise SamplingValueError(f"{name} must be a finite number.")
    if name in _INT_MINIMUMS:
        if not number.is_integer() or abs(number) > _INT_MAXIMUM:
            raise SamplingValueError(f"{name} must be a whole number.")
        whole = int(number)
        if whole < _INT_MINIMUMS[name]:
            raise SamplingValueError(f"{name} must be at least {_INT_MINIMUMS[name]}.")
        return whole
    low, high = _FLOAT_RANGES[name]
    if not low <= number <= high:
        raise SamplingValueError(f"{name} must be between {low:g} and {high:g}.")
    return number
