"""What a higher app brings to a lower one without the lower one importing it (docs/architecture.md,
"Layers"): the lower app owns a `Hook` and uses what it holds; each higher app adds to it from its
`AppConfig.ready()`. An app that is not installed adds nothing, so its line is simply not there.

`order` places an entry among the others (the home page lists its counts in this order); entries of
one order keep the order they were added in. Adding an equal entry again changes nothing, so a
`ready()` that runs twice does not double a line.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Hook(Generic[T]):
    def __init__(self, name: str) -> None:
        self.name = name
        self._entries: list[tuple[int, int, T]] = []

    def add(self, entry: T, *, order: int) -> T:
        if not any(known == entry for _, _, known in self._entries):
            self._entries.append((order, len(self._entries), entry))
            self._entries.sort(key=lambda item: item[:2])
        return entry

    def __iter__(self) -> Iterator[T]:
        return iter([entry for _, _, entry in self._entries])

    def __repr__(self) -> str:
        return f"Hook({self.name!r}, {len(self._entries)} entries)"
