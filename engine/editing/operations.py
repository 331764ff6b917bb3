"""The editor's changes to a node list, as pure functions: a list in, a new list out, or EditRefused.

Entries are `(key, node)` pairs: the key is whatever the caller uses to find the row again (its
primary key; None for a node not stored yet). Markers and chatHistory keep their rules: the chat
history cannot be deleted or duplicated, and no marker can be duplicated (a second slot for the same
block of the server's would be ambiguous).
"""

from __future__ import annotations

import uuid
from collections.abc import Hashable, Sequence
from dataclasses import replace

from engine.st_format import PresetNode

from .node_form import EditRefused

Entry = tuple[Hashable | None, PresetNode]
CHAT_HISTORY = "chatHistory"


def _index(entries: Sequence[Entry], key: Hashable) -> int:
    for index, (entry_key, _) in enumerate(entries):
        if entry_key == key:
            return index
    raise EditRefused("That node is no longer in this preset.")


def move(entries: Sequence[Entry], key: Hashable, steps: int) -> list[Entry]:
    """The node moved `steps` places (negative: up), stopping at either end."""
    result = list(entries)
    start = _index(result, key)
    target = max(0, min(len(result) - 1, start + steps))
    result.insert(target, result.pop(start))
    return result


def reorder(entries: Sequence[Entry], keys: Sequence[Hashable]) -> list[Entry]:
    """The nodes in the order of `keys`, which must name every node exactly once."""
    by_key = {key: (key, node) for key, node in entries}
    if len(keys) != len(entries) or set(keys) != set(by_key):
        raise EditRefused("The new order must list every node of the preset exactly once.")
    return [by_key[key] for key in keys]


def replace_node(entries: Sequence[Entry], key: Hashable, node: PresetNode) -> list[Entry]:
    """The list with the node under `key` replaced (kind rules: a marker stays a marker)."""
    result = list(entries)
    index = _index(result, key)
    old = result[index][1]
    if (old.kind == "marker") != (node.kind == "marker"):
        raise EditRefused("A marker stays a marker: it marks where one of the server's blocks goes.")
    result[index] = (key, node)
    return result


def insert_after(entries: Sequence[Entry], key: Hashable | None, node: PresetNode) -> list[Entry]:
    """The list with a new node after the one under `key` (at the end when `key` is None)."""
    if any(existing.identifier == node.identifier for _, existing in entries):
        raise EditRefused(f"This preset already has a node with the identifier “{node.identifier}”.")
    result = list(entries)
    index = len(result) if key is None else _index(result, key) + 1
    result.insert(index, (None, node))
    return result


def duplicate(entries: Sequence[Entry], key: Hashable) -> tuple[list[Entry], PresetNode]:
    """The list with a copy of the node right after it (new identifier, name marked as a copy)."""
    node = entries[_index(entries, key)][1]
    if node.kind == "marker":
        raise EditRefused("Markers cannot be duplicated: each of the server's blocks has one place.")
    copy = replace(node, identifier=new_identifier(), name=f"{node.name} (copy)")
    return insert_after(entries, key, copy), copy


def delete(entries: Sequence[Entry], key: Hashable) -> tuple[list[Entry], PresetNode]:
    """The list without the node under `key`; the chat history cannot be deleted."""
    result = list(entries)
    index = _index(result, key)
    node = result[index][1]
    if node.identifier == CHAT_HISTORY:
        raise EditRefused("The chat history cannot be deleted: every prompt needs a place for it.")
    del result[index]
    return result, node


def new_identifier() -> str:
    """A fresh identifier for a node the admin adds, shaped like SillyTavern's own (a UUID)."""
    return str(uuid.uuid4())
