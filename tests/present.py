"""`present(value)`: the value a test needs to be there. It fails the test when the value is None, and
gives the type checker the value without None (a cache miss or a missing row is a failure, not a
crash three attributes later)."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def present(value: T | None) -> T:
    assert value is not None, "expected a value, got None"
    return value
