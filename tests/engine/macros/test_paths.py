"""Dotted paths into JSON values (shared with the per-message variables)."""

from __future__ import annotations

from typing import Any

import pytest

from engine.macros.paths import (
    PathError,
    append_path,
    delete_path,
    get_path,
    increment_path,
    set_path,
    split_path,
)
from engine.macros.values import JsonCollection

WORLD: dict[str, Any] = {"npcs": {"alice": {"hp": 12, "tags": ["brave"]}}, "log": []}


def as_object(value: JsonCollection) -> dict[str, Any]:
    """A path function's result for an object put in: an object."""
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize(
    ("path", "found", "value"),
    [
        ("npcs.alice.hp", True, 12),
        ("npcs.alice.tags.0", True, "brave"),
        ("npcs.alice.tags.-1", True, "brave"),
        ("npcs.bob", False, None),
        ("npcs.alice.hp.deeper", False, None),
        ("log.0", False, None),
    ],
)
def test_get_path_walks_objects_and_arrays(path: str, found: bool, value: object) -> None:
    assert get_path(WORLD, split_path(path)) == (found, value)


@pytest.mark.parametrize("segment", ["__proto__", "constructor", "prototype"])
def test_forbidden_segments_are_refused_with_a_clear_message(segment: str) -> None:
    with pytest.raises(PathError, match=segment):
        split_path(f"npcs.{segment}.hp")


def test_an_empty_segment_is_refused() -> None:
    with pytest.raises(PathError, match="empty"):
        split_path("npcs..hp")


def test_set_path_creates_missing_objects_and_does_not_mutate_the_input() -> None:
    result = as_object(set_path(WORLD, "npcs.bob.hp", 7))
    assert result["npcs"]["bob"] == {"hp": 7}
    assert "bob" not in WORLD["npcs"]


def test_set_path_can_append_at_the_end_of_an_array() -> None:
    assert as_object(set_path(WORLD, "log.0", "first"))["log"] == ["first"]


def test_set_path_refuses_an_index_past_the_end() -> None:
    with pytest.raises(PathError):
        set_path(WORLD, "log.5", "x")


def test_set_path_through_a_scalar_is_refused() -> None:
    with pytest.raises(PathError):
        set_path(WORLD, "npcs.alice.hp.max", 20)


def test_delete_path_removes_an_object_entry_or_an_array_element() -> None:
    assert "hp" not in as_object(delete_path(WORLD, "npcs.alice.hp"))["npcs"]["alice"]
    assert as_object(delete_path(WORLD, "npcs.alice.tags.0"))["npcs"]["alice"]["tags"] == []
    assert WORLD["npcs"]["alice"]["tags"] == ["brave"]


def test_delete_path_of_a_missing_entry_changes_nothing() -> None:
    assert delete_path(WORLD, "npcs.zed") == WORLD


def test_append_path_appends_or_creates_an_array() -> None:
    assert as_object(append_path(WORLD, "npcs.alice.tags", "kind"))["npcs"]["alice"]["tags"] == [
        "brave",
        "kind",
    ]
    assert as_object(append_path(WORLD, "npcs.alice.notes", "n"))["npcs"]["alice"]["notes"] == ["n"]


def test_append_path_to_a_non_array_is_refused() -> None:
    with pytest.raises(PathError, match="array"):
        append_path(WORLD, "npcs.alice.hp", 1)


def test_increment_path_adds_to_numbers_and_starts_missing_ones_at_zero() -> None:
    assert as_object(increment_path(WORLD, "npcs.alice.hp", -2))["npcs"]["alice"]["hp"] == 10
    assert as_object(increment_path(WORLD, "npcs.alice.mp"))["npcs"]["alice"]["mp"] == 1
    assert as_object(increment_path({"n": "4"}, "n"))["n"] == 5


def test_increment_path_of_text_is_refused() -> None:
    with pytest.raises(PathError, match="number"):
        increment_path({"name": "Ann"}, "name")
