"""What a macro handler may use of the running pass: its variable namespaces and a small interface.

`render.py` implements `MacroState`; the handlers (`handlers.py`, `flow.py`) only see this protocol,
so neither reaches into the renderer's private classes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from .env import MacroEnv
from .nodes import EachBlock, IfBlock, Macro, Parts, Scoped, Variable

# A draw of {{random}} or {{roll}}: (kind, segment key, macro start, occurrence, choices or formula).
DrawKey = tuple[int, str, int, int, int | str]


class Namespace:
    """One variable namespace during a render. Change `values` through `write`, `delete` and
    `replace` only: they keep `others`, the keys whose value is not a string."""

    __slots__ = ("others", "shared", "values")

    def __init__(self, start: dict[str, Any]) -> None:
        self.replace(dict(start))

    def replace(self, values: dict[str, Any], *, texts: bool = False, shared: bool = False) -> None:
        """`values` in place of the namespace's own; `texts` says they are all strings; `shared` that the
        dict is also held elsewhere (a kept render's), so the first change copies it."""
        self.values = values
        self.shared = shared
        self.others = set() if texts else {key for key, value in values.items() if type(value) is not str}

    @property
    def texts_only(self) -> bool:
        """True when every value is a string (equal such values render alike: 1 == True, "1" != "true")."""
        return not self.others

    def read(self, key: str) -> tuple[bool, Any]:
        if key in self.values:
            return True, self.values[key]
        return False, None

    def write(self, key: str, value: Any) -> None:
        if self.shared:
            self.values, self.shared = dict(self.values), False
        self.values[key] = value
        if type(value) is str:
            self.others.discard(key)
        else:
            self.others.add(key)

    def delete(self, key: str) -> None:
        if self.shared:
            self.values, self.shared = dict(self.values), False
        self.values.pop(key, None)
        self.others.discard(key)


class MacroState(Protocol):
    """The running pass as a handler sees it."""

    env: MacroEnv

    @property
    def moment(self) -> datetime: ...

    local: Namespace
    global_: Namespace
    key: str  # the segment being rendered (seeds draws)

    @property
    def base(self) -> int: ...  # the segment's draw seed

    draws: dict[int, int]  # per macro position: how many times it drew in this segment
    drawn: dict[DrawKey, int]  # draws of the render, by macro
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
