"""Dotted paths into JSON values (`npcs.alice.hp`, `items.0`): get, set, delete, append, increment.

Pure functions; writers return a new root and never mutate the value they were given. Numeric
segments index arrays (negative ones count from the end). The segments `__proto__`, `constructor`
and `prototype` are refused with `PathError`, as a JavaScript consumer of these values could be
polluted by them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import EngineError
from .values import JsonCollection, js_number

FORBIDDEN_SEGMENTS = frozenset({"__proto__", "constructor", "prototype"})
_MISSING = object()


class PathError(EngineError, ValueError):
    """A path that cannot be used; the message is a sentence for the user."""


def split_path(path: str) -> tuple[str, ...]:
    """Return the trimmed segments of a dotted path; raise PathError for an empty or forbidden segment."""
    segments = tuple(segment.strip() for segment in path.split("."))
    for segment in segments:
        if not segment:
            raise PathError(f"The path {path!r} has an empty segment.")
        if segment in FORBIDDEN_SEGMENTS:
            raise PathError(f"The path {path!r} uses the forbidden segment {segment!r}.")
    return segments


def _index(container: list[Any], segment: str) -> int | None:
    if not segment.lstrip("-").isdigit():
        return None
    index = int(segment)
    if index < 0:
        index += len(container)
    return index if 0 <= index < len(container) else None


def _child(container: Any, segment: str) -> Any:
    if isinstance(container, dict):
        return container.get(segment, _MISSING)
    if isinstance(container, list):
        index = _index(container, segment)
        return _MISSING if index is None else container[index]
    return _MISSING


def get_path(value: Any, segments: tuple[str, ...]) -> tuple[bool, Any]:
    """Return (found, value at the path); (False, None) when any step is missing or not a collection."""
    current = value
    for segment in segments:
        current = _child(current, segment)
        if current is _MISSING:
            return False, None
    return True, current


def _update(value: Any, segments: tuple[str, ...], change: Any, path: str) -> Any:
    """Rebuild the containers along the path, calling `change(old_or_MISSING)` at the leaf."""
    head, rest = segments[0], segments[1:]
    if isinstance(value, list):
        index = _index(value, head)
        if index is None:
            if head.isdigit() and int(head) == len(value):
                index = len(value)
            else:
                raise PathError(f"The path {path!r}: {head!r} is not an index of the array.")
        copy = list(value)
        old = copy[index] if index < len(copy) else _MISSING
        new = change(old) if not rest else _update({} if old is _MISSING else old, rest, change, path)
        if index == len(copy):
            copy.append(new)
        else:
            copy[index] = new
        return copy
    if isinstance(value, dict):
        entries = dict(value)
        old = entries.get(head, _MISSING)
        entries[head] = (
            change(old) if not rest else _update({} if old is _MISSING else old, rest, change, path)
        )
        return entries
    raise PathError(f"The path {path!r} goes through a value that is not an object or array.")


def _rewritten(
    root: JsonCollection, segments: tuple[str, ...], change: Callable[[Any], Any], path: str
) -> JsonCollection:
    """`_update` from a root collection: a new collection of the same kind (or PathError)."""
    new_root: JsonCollection = _update(root, segments, change, path)
    return new_root


def set_path(value: JsonCollection, path: str, new: Any) -> JsonCollection:
    """Return a copy of `value` with `new` stored at `path` (missing objects on the way are created)."""
    return _rewritten(value, split_path(path), lambda _old: new, path)


def delete_path(value: JsonCollection, path: str) -> JsonCollection:
    """Return a copy of `value` without the entry at `path` (unchanged when it is missing)."""
    segments = split_path(path)
    found, _ = get_path(value, segments)
    if not found:
        return value
    _parent_found, parent = get_path(value, segments[:-1])
    leaf = segments[-1]
    if isinstance(parent, dict):
        trimmed: JsonCollection = {key: item for key, item in parent.items() if key != leaf}
    else:
        index = _index(parent, leaf)
        assert index is not None  # the path was found, so its last segment indexes the array
        trimmed = parent[:index] + parent[index + 1 :]
    if len(segments) == 1:
        return trimmed
    return _rewritten(value, segments[:-1], lambda _old: trimmed, path)


def append_path(value: JsonCollection, path: str, item: Any) -> JsonCollection:
    """Return a copy of `value` with `item` appended to the array at `path` (created when missing)."""

    def append(old: Any) -> Any:
        if old is _MISSING:
            return [item]
        if not isinstance(old, list):
            raise PathError(f"The path {path!r} does not hold an array.")
        return [*old, item]

    return _rewritten(value, split_path(path), append, path)


def increment_path(value: JsonCollection, path: str, by: float | int = 1) -> JsonCollection:
    """Return a copy of `value` with the number at `path` increased by `by` (missing counts as 0)."""

    def increment(old: Any) -> Any:
        number = 0 if old is _MISSING else js_number(old)
        if number is None or isinstance(old, dict | list | bool):
            raise PathError(f"The path {path!r} does not hold a number.")
        return number + by

    return _rewritten(value, split_path(path), increment, path)
