"""A preset written for temperature 1.3 and top-k 40, stored and active for the Lantern Guild."""

from __future__ import annotations

import pytest

from presets import services
from presets.models import Preset
from tests.presets.conftest import make_preset


@pytest.fixture
def warm_preset(lantern, alice) -> Preset:
    raw = make_preset(
        ("style", "Write vividly.", True),
        temperature=1.3,
        top_k=40,
        top_p=0.9,
        frequency_penalty=0.4,
        openai_max_tokens=900,
        seed=-1,
        reasoning_effort="auto",
    )
    return services.preset_import(server=lantern, raw=raw, filename="Warm.json", by=alice).preset
