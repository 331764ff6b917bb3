"""A preset ready for assembly: nodes in prompt order with their macro templates pre-compiled.

Pure (no Django); this is what the preset cache stores and the assembler consumes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.macros import CompiledText, RenderMemo, compile_text
from engine.regex import CompiledScript, PresetScripts, compile_scripts
from engine.sampling import SamplerSettings
from engine.st_format.model import PresetNode, PromptSettings


@dataclass(frozen=True, slots=True)
class CompiledNode:
    """A node plus its compiled macro template (None for markers and comments)."""

    node: PresetNode
    template: CompiledText | None


@dataclass(slots=True)
class PresetMemo:
    """What the assembler works out from a compiled preset alone, once, and keeps with it: one
    attribute per thing kept, with the module that fills it (the assembler's own types sit above this
    module, so those attributes are typed `Any` and their comments name the type)."""

    # engine/assemble/rearrange.py, by generation type: the `Plan`s, the renders' memos, the `Reuse`s
    plans: dict[str, Any] = field(default_factory=dict)  # Plan
    renders: dict[str, RenderMemo] = field(default_factory=dict)
    reuses: dict[str, Any] = field(default_factory=dict)  # Reuse
    # engine/assemble/preset.py: the rendered `Formats` by (tags present, group turn), and the last
    # render's blocks mapping by its key (kept_walk knows its inputs again by that object)
    formats: dict[tuple[frozenset[str], bool], Any] = field(default_factory=dict)  # Formats
    format_blocks: dict[Any, Any] = field(default_factory=dict)  # Mapping[str, str]
    # engine/assemble/differences.py: the last sentences with what they were worked out from, and
    # the preset's own facts (None until first asked)
    differences: tuple[tuple[Any, ...], tuple[str, ...]] | None = None
    clamped: tuple[str, ...] | None = None
    dotted: bool | None = None
    piped: tuple[str, ...] | None = None
    draws: bool | None = None


@dataclass(frozen=True, slots=True)
class CompiledPreset:
    """A preset as the assembler sees it; picklable."""

    preset_id: int
    name: str
    injection_style: str  # "merge" | "standalone"
    settings: PromptSettings
    nodes: tuple[CompiledNode, ...]  # in prompt order
    sampling: SamplerSettings = field(default_factory=SamplerSettings)  # the preset's sampler settings
    regex_scripts: tuple[CompiledScript, ...] = ()  # `extensions.regex_scripts`, file order, all of them
    reasoning: tuple[str | None, str | None] = (None, None)  # the reasoning prefix and suffix it sets
    # What the engine works out from the nodes alone, once per compiled preset (engine.assemble.rearrange.plan_of).
    memo: PresetMemo = field(default_factory=PresetMemo, init=False, repr=False, compare=False)


def compile_preset(
    *,
    preset_id: int,
    name: str,
    injection_style: str,
    settings: PromptSettings,
    nodes: Sequence[PresetNode],
    sampling: SamplerSettings | None = None,
    regex: PresetScripts | None = None,
) -> CompiledPreset:
    """The preset with every content node's text compiled by the macro engine, order kept.

    A node holding only comments is compiled as content, as SillyTavern renders it
    (docs/assembly.md#what-sillytavern-118-corrected): what is left (newlines, or nothing) joins a squashed
    message, and a character card's override still finds a comment-only `main` or `jailbreak`."""
    nodes = [replace(n, kind="content") if n.kind == "comment" else n for n in nodes]
    compiled = tuple(
        CompiledNode(node=n, template=compile_text(n.content) if n.kind == "content" else None) for n in nodes
    )
    return CompiledPreset(
        preset_id=preset_id,
        name=name,
        injection_style=injection_style,
        settings=settings,
        nodes=compiled,
        sampling=sampling or SamplerSettings(),
        regex_scripts=compile_scripts(regex.scripts) if regex else (),
        reasoning=(regex.reasoning_prefix, regex.reasoning_suffix) if regex else (None, None),
    )
