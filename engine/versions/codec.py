"""How a version is stored: each distinct node once per preset (a compressed blob named by its
digest), and per version a compressed manifest of blob references, enabled flags and settings.

Measured on the corpus (bench/versions.py): a whole 300-node node list compressed is 110–280 kB, so
100 versions of it would pass 10 MB; blobs shared between versions make an edit cost one node's
blob plus a manifest of about a kilobyte.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from engine.st_format import PresetNode

LEVEL = 6
MANIFEST_FORMAT = 1
# Every node field but `enabled`, which the manifest carries (dataclasses.asdict is 10x slower).
BLOB_FIELDS = tuple(f.name for f in fields(PresetNode) if f.name != "enabled")


def node_blob(node: PresetNode) -> bytes:
    """The node's content without its enabled flag (toggles reuse blobs), as canonical JSON bytes."""
    values = {name: getattr(node, name) for name in BLOB_FIELDS}
    values["injection_trigger"] = list(node.injection_trigger)
    return json.dumps(values, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def blob_digest(blob: bytes) -> str:
    """The name a blob is stored under (hex SHA-256)."""
    return hashlib.sha256(blob).hexdigest()


def compress(data: bytes) -> bytes:
    return zlib.compress(data, LEVEL)


def node_from_blob(compressed: bytes, *, enabled: bool) -> PresetNode:
    """A stored blob back as a node, with the enabled flag the version gives it."""
    values = json.loads(zlib.decompress(compressed))
    values["enabled"] = enabled
    return PresetNode.from_dict(values)


@dataclass(frozen=True, slots=True)
class Manifest:
    """One version's node list as blob ids with enabled flags, and its settings."""

    entries: tuple[tuple[int, bool], ...]
    settings: dict[str, Any]

    def encode(self) -> bytes:
        data = {
            "format": MANIFEST_FORMAT,
            "nodes": [[blob_id, int(enabled)] for blob_id, enabled in self.entries],
            "settings": self.settings,
        }
        return compress(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())

    @classmethod
    def decode(cls, data: bytes) -> Manifest:
        values = json.loads(zlib.decompress(data))
        entries = tuple((int(blob_id), bool(enabled)) for blob_id, enabled in values["nodes"])
        return cls(entries=entries, settings=dict(values.get("settings") or {}))


def enabled_count(nodes: Sequence[PresetNode]) -> int:
    """Enabled switchable nodes (the import summary's `enabled`, docs/import.md#the-import-summary)."""
    return sum(1 for node in nodes if node.toggleable and node.enabled)
