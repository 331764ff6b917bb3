"""Variable writes shared by the `*var` macros and the variable shorthand (docs/macros.md#variables,
docs/macros.md#macros-20).

Each takes `what`, the name used in warnings (`setvar`, `.hp +=`), and never lets a value grow past
MAX_TEXT_CHARS.
"""

from __future__ import annotations

from typing import Any

from .parser import MAX_TEXT_CHARS
from .state import MacroState, Namespace
from .values import added, as_collection


def too_long(state: MacroState, what: str, size: int) -> bool:
    """True (with a warning) when a variable would grow past MAX_TEXT_CHARS characters."""
    if size <= MAX_TEXT_CHARS:
        return False
    state.warn(f"`{what}` would store more than 1 MiB of text; it was left verbatim.")
    return True


def store(state: MacroState, namespace: Namespace, key: str, value: str, what: str) -> bool:
    """Set `key` to the text `value`; False (nothing stored) when it is too long."""
    if len(value) > MAX_TEXT_CHARS and too_long(state, what, len(value)):
        return False
    namespace.write(key, value)
    return True


def add_to(state: MacroState, namespace: Namespace, key: str, addition: Any, what: str) -> bool:
    """`addvar`: append to an array, add two numbers, else append as text; False when too long."""
    current = namespace.get(key)
    array = current if isinstance(current, list) else None
    if array is None and isinstance(current, str):
        parsed = as_collection(current)
        array = parsed if isinstance(parsed, list) else None
    if array is not None:
        size = sum(len(item) if isinstance(item, str) else 16 for item in (*array, addition))
        if too_long(state, what, size):
            return False
        namespace.write(key, [*array, addition])
        return True
    value = added(current, addition)
    if isinstance(value, str) and too_long(state, what, len(value)):
        return False
    namespace.write(key, value)
    return True


def step(state: MacroState, namespace: Namespace, key: str, delta: int, what: str) -> Any:
    """`incvar`/`decvar`: SillyTavern's add of 1 or -1 (docs/macros.md): a number moves, an array gets
    the number appended, text gets it appended as text (`abc` → `abc1`); the new value stored and
    returned, None (nothing stored) when it would be too long."""
    if not add_to(state, namespace, key, delta, what):
        return None
    return namespace.get(key)
