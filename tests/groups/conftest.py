"""A party of three cards on the Lantern Guild (Mira, Tomas, Old Tom) and a card on Harbor Hall."""

from __future__ import annotations

import json
from typing import Any

import pytest

from characters import services as card_services
from core.actors import SYSTEM


def card_bytes(name: str, **data: Any) -> bytes:
    fields = {
        "name": name,
        "description": f"{name} keeps the lighthouse.",
        "scenario": f"{name}'s night.",
        **data,
    }
    return json.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": fields}).encode()


def add_card(server, name: str, **data: Any):
    return card_services.card_import(
        server=server, raw=card_bytes(name, **data), filename=f"{name}.json", activate=False, by=SYSTEM
    ).row


@pytest.fixture
def party_cards(lantern) -> dict[str, Any]:
    return {name: add_card(lantern, name) for name in ("Mira", "Tomas", "Old Tom")}


@pytest.fixture
def harbor_card(harbor):
    return add_card(harbor, "Gull")


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run a write's on-commit work (the cache generation's publication), as a real commit does."""
    return django_capture_on_commit_callbacks
