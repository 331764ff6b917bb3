"""Factories the tests share: hand-made presets (as upload bytes and as compiled presets) and the
preset that carries HTML and script for the XSS checks."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from engine import compile_preset
from engine.st_format import PresetNode, PromptSettings

DEFAULT_BUCKETS = Path(__file__).resolve().parents[1] / "assembly" / "default_buckets.json"


def make_preset(*contents: tuple[str, str, bool], markers: bool = True, **top: Any) -> bytes:
    """A Prompt Manager preset: `contents` are (identifier, text, enabled) content nodes after `main`,
    followed by the charDescription and chatHistory markers (when `markers`)."""
    prompts: list[dict[str, Any]] = [
        {"identifier": "main", "name": "Main Prompt", "role": "system", "content": "Be kind."}
    ]
    order = [{"identifier": "main", "enabled": True}]
    for identifier, text, enabled in contents:
        prompts.append(
            {"identifier": identifier, "name": identifier.title(), "role": "system", "content": text}
        )
        order.append({"identifier": identifier, "enabled": enabled})
    if markers:
        for identifier in ("charDescription", "chatHistory"):
            prompts.append({"identifier": identifier, "name": identifier, "marker": True})
            order.append({"identifier": identifier, "enabled": True})
    return json.dumps(
        {**top, "prompts": prompts, "prompt_order": [{"character_id": 100001, "order": order}]}
    ).encode()


def make_big_preset(nodes: int = 500, size: int = 2_000_000) -> bytes:
    """The importer engineer's generated preset (bench/genpreset.py), loaded without making bench a package."""
    path = Path(__file__).resolve().parents[1] / "bench" / "genpreset.py"
    spec = importlib.util.spec_from_file_location("tk_bench_genpreset", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_big_preset(nodes=nodes, size=size)


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


XSS_PRESET = {
    "prompts": [
        {"identifier": "main", "name": "Main Prompt", "content": "Main says hi.", "role": "system"},
        {
            "identifier": "evil",
            "name": "Evil <b>node</b>",
            "content": "<script>alert('x')</script><img src=x onerror=\"alert('y')\">",
            "role": "system",
        },
        {"identifier": "chatHistory", "name": "Chat History", "marker": True},
    ],
    "prompt_order": [
        {
            "character_id": 100001,
            "order": [
                {"identifier": "main", "enabled": True},
                {"identifier": "evil", "enabled": True},
                {"identifier": "chatHistory", "enabled": True},
            ],
        }
    ],
}
