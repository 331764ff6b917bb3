"""Hand-made compiled presets for the engine tests: nodes with the importer's defaults, markers,
depth injections, and a preset compiled from them."""

from __future__ import annotations

from typing import Any

from engine import compile_preset
from engine.st_format import PresetNode, PromptSettings


def make_node(
    identifier: str, *, kind: str = "content", content: str = "", enabled: bool = True, **fields: Any
):
    """A PresetNode with the importer's defaults; `fields` overrides any of them."""
    values: dict[str, Any] = {
        "identifier": identifier,
        "name": fields.pop("name", identifier),
        "kind": kind,
        "role": "system",
        "content": content,
        "enabled": enabled,
        "injection_position": 0,
        "injection_depth": 4,
        "injection_order": 100,
        "injection_trigger": (),
        "forbid_overrides": False,
    }
    values.update(fields)
    return PresetNode(**values)


def marker(identifier: str, *, enabled: bool = True, **fields: Any):
    return make_node(identifier, kind="marker", enabled=enabled, **fields)


def depth(identifier: str, text: str, at: int, *, order: int = 100, role: str = "system", **fields: Any):
    return make_node(
        identifier,
        content=text,
        injection_position=1,
        injection_depth=at,
        injection_order=order,
        role=role,
        **fields,
    )


def build_preset(
    nodes, *, style: str = "merge", settings: dict[str, Any] | None = None, name: str = "hand-made"
):
    # A hand-made preset opens no new chat unless a test asks for one: SillyTavern's default
    # "[Start a new Chat]" would add a message every test would have to skip
    # (docs/assembly.md#what-sillytavern-118-corrected).
    return compile_preset(
        preset_id=1,
        name=name,
        injection_style=style,
        settings=PromptSettings.from_dict({"new_chat_prompt": "", **(settings or {})}),
        nodes=tuple(nodes),
    )
