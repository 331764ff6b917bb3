"""The active-preset cache (docs/presets.md): the compiled preset per server, so requests only evaluate
macros.

A `servers.generational_cache` declaration (stamp `presets`, which the channel presets ride too): the
shared cache holds the preset's nodes and settings as plain data, because unpickling compiled macro
templates costs more than compiling them again (measured: 105 ms vs 58 ms for the heaviest corpus
preset); each process keeps the compiled preset (`CompiledPreset`, macros parsed once). A warm hit is
one small cache read (the generation), no SQL, no compiling. During a database outage the process's
last compiled copy, else the day-long stale copy, is served (docs/reliability.md).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings

from engine import CompiledPreset, compile_preset
from engine.regex import PresetScripts
from engine.sampling import SamplerSettings
from engine.st_format import PresetNode, PromptSettings
from servers.generational_cache import GenerationalCache

from . import selectors
from .models import Preset

PREVIEW_ENTRIES = 16  # compiled non-active presets kept per process for the preview


@dataclass(frozen=True, slots=True)
class StoredPreset:
    """What the shared cache holds for an active preset: plain data, cheap to (un)pickle."""

    preset_id: int
    name: str
    injection_style: str
    settings: PromptSettings
    nodes: tuple[PresetNode, ...]
    sampling: dict[str, Any] = field(default_factory=dict)  # SamplerSettings.to_dict()
    regex: PresetScripts | None = None


def stored(preset: Preset) -> StoredPreset:
    """A preset row's plain data, as the shared cache holds it."""
    return StoredPreset(
        preset_id=preset.pk,
        name=preset.name,
        injection_style=preset.injection_style,
        settings=selectors.prompt_settings(preset),
        nodes=tuple(selectors.st_nodes(preset.pk)),
        sampling=dict(preset.sampling or {}),
        regex=selectors.regex_scripts(preset),
    )


def compile_stored(stored: StoredPreset | None) -> CompiledPreset | None:
    """Compile a preset's plain data (macros parsed once); None stays None (native assembly)."""
    if stored is None:
        return None
    return compile_preset(
        preset_id=stored.preset_id,
        name=stored.name,
        injection_style=stored.injection_style,
        settings=stored.settings,
        nodes=stored.nodes,
        sampling=SamplerSettings.from_dict(stored.sampling),
        regex=stored.regex,
    )


def _load_active(server_id: int) -> StoredPreset | None:
    preset = selectors.active_preset_row(server_id)
    return None if preset is None else stored(preset)


ACTIVE: GenerationalCache[int, StoredPreset | None, CompiledPreset | None] = GenerationalCache(
    name="presets:active",
    stamp="presets",
    load=_load_active,
    compile=compile_stored,
    local_entries=lambda: settings.ST_PRESET_LOCAL_ENTRIES,
    valid=lambda plain: plain is None or isinstance(plain, StoredPreset),
)


def get_active_preset(server_id: int) -> CompiledPreset | None:
    """The server's active preset, compiled; None when no preset is active (native assembly)."""
    return ACTIVE.get(server_id)


# What a write bumps (servers.writes.server_write) so that every process reloads the server's
# presets (active and per channel).
STAMP = ACTIVE.stamp


_previews: OrderedDict[int, tuple[datetime, CompiledPreset]] = OrderedDict()
_previews_lock = threading.Lock()


def get_preset(preset_id: int) -> CompiledPreset:
    """Any stored preset, compiled (for the preview of a non-active preset).

    One query per call; the server's active preset comes from the active-preset cache; another is
    loaded and compiled again only when it changed since this process last compiled it (every write
    touches `updated_at`). Raises Preset.DoesNotExist.
    """
    preset = Preset.objects.defer("stored_text").get(pk=preset_id)
    if preset.is_active:  # the active-preset cache holds it compiled already (a worker warms it)
        active = get_active_preset(preset.server_id)
        if active is not None and active.preset_id == preset.pk:
            return active
    with _previews_lock:
        known = _previews.get(preset_id)
    if known is not None and known[0] == preset.updated_at:
        return known[1]
    compiled = compile_preset_row(preset)
    with _previews_lock:
        _previews[preset_id] = (preset.updated_at, compiled)
        _previews.move_to_end(preset_id)
        while len(_previews) > PREVIEW_ENTRIES:
            _previews.popitem(last=False)
    return compiled


def compile_preset_row(preset: Preset) -> CompiledPreset:
    compiled = compile_stored(stored(preset))
    assert compiled is not None
    return compiled


def clear_local() -> None:
    """Drop every compiled preset this process holds (tests call it between cases)."""
    ACTIVE.clear_local()
    with _previews_lock:
        _previews.clear()
