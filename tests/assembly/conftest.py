"""Fixtures for the assembly app's tests: the engine's (no network, the default sample document) and a
stored preset."""

from __future__ import annotations

import json

import pytest

from core.actors import Agent
from devtools.factories import XSS_PRESET
from tests.engine.assemble.conftest import doc_with, no_network, sample_doc, sample_document  # noqa: F401 (fixtures)


@pytest.fixture
def stored_preset(lantern):
    """A small preset stored for the Lantern Guild and active; its `evil` node carries HTML."""
    from presets.services import preset_import

    return preset_import(
        server=lantern,
        raw=json.dumps(XSS_PRESET).encode(),
        filename="tiny-xss.json",
        by=Agent("test"),
    ).preset
