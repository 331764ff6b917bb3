"""Fixtures for the engine's assembly tests: no network, the default sample document and documents
built from it."""

from __future__ import annotations

import copy
import ipaddress
import json
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from devtools.factories import DEFAULT_BUCKETS


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


@pytest.fixture
def doc_with() -> Callable[..., Any]:
    """Build a bucket document from the default sample with some fields replaced."""
    from engine.buckets import parse_buckets

    def build(**changes: Any):
        data = copy.deepcopy(json.loads(DEFAULT_BUCKETS.read_text(encoding="utf-8")))
        data.update(changes)
        return parse_buckets(data)

    return build
