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


class _Absent:
    """The value of a key that has none, as a segment's reads and writes note it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


class Namespace:
    """One variable namespace during a render. Change `values` through `write`, `delete` and
    `replace` only: they keep `others`, the keys whose value is not a string."""

    __slots__ = ("others", "reads", "values", "writes")

    def __init__(self, start: dict[str, Any]) -> None:
        self.replace(dict(start))
        # While a segment that may be kept renders (render._Pass.render_kept): the value each key had when
        # the segment first read it (ABSENT: none), and the value it left in each key it changed.
        self.reads: dict[str, Any] | None = None
        self.writes: dict[str, Any] | None = None

    def replace(self, values: dict[str, Any], *, texts: bool = False) -> None:
        """`values` in place of the namespace's own; `texts` says they are all strings."""
        self.values = values
        if texts or not values:
            self.others: set[str] = set()
        else:
            self.others = {key for key, value in values.items() if type(value) is not str}

    @property
    def texts_only(self) -> bool:
        """True when every value is a string (equal such values render alike: 1 == True, "1" != "true")."""
        return not self.others

    def read(self, key: str) -> tuple[bool, Any]:
        reads = self.reads
        if reads is not None and key not in reads and key not in self.writes:  # type: ignore[operator]
            reads[key] = self.values.get(key, ABSENT)
        if key in self.values:
            return True, self.values[key]
        return False, None

    def get(self, key: str) -> Any:
        """The key's value, None when it has none (`read` in one step)."""
        reads = self.reads
        if reads is not None and key not in reads and key not in self.writes:  # type: ignore[operator]
            reads[key] = self.values.get(key, ABSENT)
        return self.values.get(key)

    def write(self, key: str, value: Any) -> None:
        self.values[key] = value
        if self.writes is not None:
            self.writes[key] = value
        if type(value) is str:
            self.others.discard(key)
        else:
            self.others.add(key)

    def delete(self, key: str) -> None:
        self.values.pop(key, None)
        if self.writes is not None:
            self.writes[key] = ABSENT
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
