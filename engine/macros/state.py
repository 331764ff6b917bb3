"""What a macro handler may use of the running pass: its variable namespaces and a small interface.

`render.py` implements `MacroState`; the handlers (`handlers.py`, `flow.py`) only see this protocol,
so neither reaches into the renderer's private classes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from .env import MacroEnv
from .nodes import EachBlock, IfBlock, Macro, Parts, Scoped, Variable


class Namespace:
    """One variable namespace during a pass; `forward` (S1) answers reads of keys not yet known."""

    __slots__ = ("forward", "initial", "missed", "values", "version", "written")

    def __init__(self, start: dict[str, Any], forward: dict[str, Any] | None) -> None:
        self.values = dict(start)
        self.initial = frozenset(start)
        self.written: set[str] = set()
        self.forward = forward
        self.missed: set[str] = set()  # keys read before S0 or this pass gave them a value
        self.version = 0  # counts writes, so an unchanged namespace is not copied again

    def copy_state(self) -> tuple[int, dict[str, Any], set[str]]:
        return self.version, dict(self.values), set(self.written)

    def restore(self, state: tuple[int, dict[str, Any], set[str]], forward: dict[str, Any]) -> None:
        self.version, values, written = state
        self.values, self.written, self.forward = dict(values), set(written), forward

    def read(self, key: str) -> tuple[bool, Any]:
        if key in self.values:
            return True, self.values[key]
        if key not in self.initial and key not in self.written:
            forward = self.forward
            if forward is None:
                self.missed.add(key)
            elif key in forward:
                return True, forward[key]
        return False, None

    def write(self, key: str, value: Any) -> None:
        self.values[key] = value
        self.written.add(key)
        self.version += 1

    def delete(self, key: str) -> None:
        self.values.pop(key, None)
        self.written.add(key)
        self.version += 1


class MacroState(Protocol):
    """The running pass as a handler sees it."""

    env: MacroEnv
    moment: datetime
    local: Namespace
    global_: Namespace
    key: str  # the segment being rendered (seeds draws)
    base: int  # the segment's draw seed
    draws: dict[int, int]  # per macro position: how many times it drew in this segment
    drawn: dict[tuple, int]  # draws shared by both passes
    loops: list[tuple[Any, Any]]  # the `each` loops around the macro, innermost last
    expanded: set[str]

    def warn(self, message: str, key: str | None = None) -> None: ...
    def parts(self, parts: Parts) -> str: ...
    def arg(self, macro: Macro, index: int) -> str: ...
    def rest(self, macro: Macro, index: int) -> str: ...
    def raw(self, node: Macro | EachBlock | Scoped | IfBlock | Variable) -> str: ...
    def lookup(self, namespace: Namespace, key: str) -> Any: ...
    def key_of(self, macro: Macro) -> str: ...
    def call(self, name: str) -> str: ...
