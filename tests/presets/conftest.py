"""Preset fixtures: small hand-made presets, the demo preset stored for the Lantern Guild, upload helpers."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from devtools.factories import make_preset
from devtools.genpreset import make_big_preset
from presets import cache as preset_cache
from presets import services
from presets.demo import DEMO_FILE
from presets.models import Preset


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


@pytest.fixture(scope="session")
def big_preset_bytes() -> bytes:
    return make_big_preset()
