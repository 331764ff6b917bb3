"""Preset fixtures: small hand-made presets, the demo preset stored for the Lantern Guild, upload helpers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from presets import cache as preset_cache
from presets import services
from presets.demo import DEMO_FILE
from presets.models import Preset


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


@pytest.fixture(autouse=True)
def _fresh_local_presets() -> None:
    """Each test starts without compiled presets left in this process by an earlier one."""
    preset_cache.clear_local()


@pytest.fixture
def demo_bytes() -> bytes:
    return DEMO_FILE.read_bytes()


@pytest.fixture
def house_style(lantern, alice, demo_bytes) -> Preset:
    """The demo preset, stored and active for the Lantern Guild."""
    return services.preset_import(
        server=lantern, raw=demo_bytes, filename="House Style.json", by=alice
    ).preset


@pytest.fixture
def second_preset(lantern, alice) -> Preset:
    """Another (inactive) preset of the Lantern Guild."""
    raw = make_preset(("rules", "Follow the rules.", True))
    return services.preset_import(
        server=lantern, raw=raw, filename="Second.json", activate=False, by=alice
    ).preset


@pytest.fixture
def harbor_preset(harbor, charlie) -> Preset:
    raw = make_preset(("harbor", "Harbor rules.", True))
    return services.preset_import(server=harbor, raw=raw, filename="Harbor.json", by=charlie).preset


def upload(client, server_id: int, raw: bytes, filename: str = "My Preset.json", **fields: Any):
    """POST the upload form as a browser without JavaScript would."""
    data = {
        "file": SimpleUploadedFile(filename, raw, content_type="application/json"),
        "activate": "1",
        **fields,
    }
    return client.post(reverse("presets:upload", args=[server_id]), data)


def make_big_preset(nodes: int = 500, size: int = 2_000_000) -> bytes:
    """The importer engineer's generated preset (bench/genpreset.py), loaded without making bench a package."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / "genpreset.py"
    spec = importlib.util.spec_from_file_location("tk_bench_genpreset", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_big_preset(nodes=nodes, size=size)


@pytest.fixture(scope="session")
def big_preset_bytes() -> bytes:
    return make_big_preset()
