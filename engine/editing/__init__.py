"""Editing a preset's nodes: one edited node normalised as an import would, and the list changes the
editor makes (move, reorder, replace, add, duplicate, delete). Pure; callers import from here."""

from .node_form import EDITABLE_FIELDS, EditRefused, NormalisedNode, normalise_node
from .operations import (
    Entry,
    delete,
    duplicate,
    insert_after,
    move,
    new_identifier,
    reorder,
    replace_node,
)

__all__ = [
    "EDITABLE_FIELDS",
    "EditRefused",
    "Entry",
    "NormalisedNode",
    "delete",
    "duplicate",
    "insert_after",
    "move",
    "new_identifier",
    "normalise_node",
    "reorder",
    "replace_node",
]
