"""Preset versions: how a version is stored, what changed between two, and a version as a
SillyTavern file. Pure (no Django); callers import from here."""

from .codec import Manifest, blob_digest, compress, enabled_count, node_blob, node_from_blob
from .diff import NODE_FIELDS, NodeChange, TextOp, VersionDiff, diff_versions, word_diff
from .export import export_preset, st_prompt

__all__ = [
    "NODE_FIELDS",
    "Manifest",
    "NodeChange",
    "TextOp",
    "VersionDiff",
    "blob_digest",
    "compress",
    "diff_versions",
    "enabled_count",
    "export_preset",
    "node_blob",
    "node_from_blob",
    "st_prompt",
    "word_diff",
]
