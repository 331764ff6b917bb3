"""Fixtures for the assembly tests: no network, the default sample document, and hand-made presets."""

from __future__ import annotations

import copy
import ipaddress
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

DEFAULT_BUCKETS = Path(__file__).resolve().parents[2] / "assembly" / "default_buckets.json"


def _is_loopback(address: Any) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if host in ("localhost", None, ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any connection to a non-loopback address fails the test (token counting must be offline)."""
    real_create = socket.create_connection
    real_connect = socket.socket.connect

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        if not _is_loopback(address):
            raise AssertionError(f"network access attempted: {address!r}")
        return real_create(address, *args, **kwargs)

    def connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise AssertionError(f"network access attempted: {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket, "create_connection", create_connection)
    monkeypatch.setattr(socket.socket, "connect", connect)
    yield


@pytest.fixture
def sample_document() -> dict[str, Any]:
    """A fresh copy of the shipped default bucket document."""
    return json.loads(DEFAULT_BUCKETS.read_text(encoding="utf-8"))


@pytest.fixture
def sample_doc(sample_document):
    from engine.buckets import parse_buckets

    return parse_buckets(sample_document)


def make_node(
    identifier: str, *, kind: str = "content", content: str = "", enabled: bool = True, **fields: Any
):
    """A PresetNode with the importer's defaults; `fields` overrides any of them."""
    from engine.st_format import PresetNode

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
    from engine.compiled import compile_preset
    from engine.st_format import PromptSettings

    return compile_preset(
        preset_id=1,
        name=name,
        injection_style=style,
        settings=PromptSettings.from_dict(settings or {}),
        nodes=tuple(nodes),
    )


@pytest.fixture
def doc_with() -> Callable[..., Any]:
    """Build a bucket document from the default sample with some fields replaced."""
    from engine.buckets import parse_buckets

    def build(**changes: Any):
        data = copy.deepcopy(json.loads(DEFAULT_BUCKETS.read_text(encoding="utf-8")))
        data.update(changes)
        return parse_buckets(data)

    return build


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


@pytest.fixture
def stored_preset(lantern):
    """A small preset stored for the Lantern Guild and active; its `evil` node carries HTML."""
    from presets.services import preset_import

    return preset_import(
        server=lantern,
        raw=json.dumps(XSS_PRESET).encode(),
        filename="tiny-xss.json",
        by=None,
        actor_label="test",
    ).preset
