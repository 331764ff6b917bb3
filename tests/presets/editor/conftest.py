"""Editor fixtures: a small preset with a known order, helpers to assemble it and read nodes."""

from __future__ import annotations

from typing import Any

import pytest

from engine import parse_buckets
from presets import services
from presets.models import Preset, PresetNode
from tests.corpus import CORPUS
from tests.presets.conftest import make_preset

CORPUS = CORPUS


@pytest.fixture
def tavern(lantern, alice) -> Preset:
    """`Tavern`: main, greet (on), rules (on), secret (off), then the two markers; active."""
    raw = make_preset(
        ("greet", "Greet every guest warmly.", True),
        ("rules", "No fighting in the tavern.", True),
        ("secret", "The cellar hides a door.", False),
    )
    return services.preset_import(server=lantern, raw=raw, filename="Tavern.json", by=alice).preset


def node(preset: Preset, identifier: str) -> PresetNode:
    return PresetNode.objects.get(preset=preset, identifier=identifier)


def order(preset: Preset) -> list[str]:
    return list(
        PresetNode.objects.filter(preset=preset).order_by("position").values_list("identifier", flat=True)
    )


def assembled_text(server_id: int, document: dict[str, Any] | None = None, **kwargs: Any) -> str:
    """Every message of an assembly for the server, joined: what the model would read."""
    from assembly.selectors import assemble_for_server, default_document

    doc = parse_buckets(document or default_document())
    assembly = assemble_for_server(server_id=server_id, doc=doc, **kwargs)
    return "\n".join(message["content"] for message in assembly.to_dict()["messages"])
