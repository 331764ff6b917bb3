"""Pass 2 without re-rendering what cannot change (SPEC §2.2's two passes, rendered once where possible).

After pass 1's first read of a key nothing had given a value yet, pass 1 renders the segments that
write variables while `WatchedValues` notes, per segment, what each key held when the segment first
touched it (its inputs) and which keys it wrote (its effects). A segment is a pure function of those
inputs, the draws (shared by both passes) and the evaluation budget, so when pass 2 reaches it with
the same inputs, its pass-1 output is replayed instead of rendered again: only the segments that read
a variable written later (or a value that such a segment changed) render twice.

This relies on one rule the handlers keep: a variable's value is never changed in place, a new value
is written.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .env import SegmentOutput

ABSENT: Any = object()  # a key the namespace did not hold


class WatchedValues(dict):
    """A namespace's values that remember the current segment's inputs (`seen`) and writes (`wrote`).

    Anything that looks at the whole namespace at once (iterating it) makes the segment `opaque`: its
    inputs are unknown and it is always rendered again.
    """

    __slots__ = ("opaque", "seen", "wrote")

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__(values)
        self.start()

    def start(self) -> None:
        self.seen: dict[str, Any] = {}
        self.wrote: set[str] = set()
        self.opaque = False

    def _touch(self, key: Any) -> None:
        if key not in self.wrote and key not in self.seen:
            self.seen[key] = dict.get(self, key, ABSENT)

    def __contains__(self, key: object) -> bool:
        self._touch(key)
        return dict.__contains__(self, key)

    def __getitem__(self, key: str) -> Any:
        self._touch(key)
        return dict.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        self._touch(key)
        return dict.get(self, key, default)

    def __setitem__(self, key: str, value: Any) -> None:
        self.wrote.add(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: str) -> None:
        self.wrote.add(key)
        dict.__delitem__(self, key)

    def pop(self, key: str, *default: Any) -> Any:
        self.wrote.add(key)
        return dict.pop(self, key, *default)

    def _whole(self) -> None:
        self.opaque = True

    def __iter__(self) -> Iterator[str]:
        self._whole()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._whole()
        return dict.__len__(self)

    def keys(self):  # type: ignore[override]
        self._whole()
        return dict.keys(self)

    def values(self):  # type: ignore[override]
        self._whole()
        return dict.values(self)

    def items(self):  # type: ignore[override]
        self._whole()
        return dict.items(self)

    def copy(self) -> dict[str, Any]:  # type: ignore[override]
        self._whole()
        return dict(dict.items(self))

    def setdefault(self, key: str, default: Any = None) -> Any:
        self._touch(key)
        self.wrote.add(key)
        return dict.setdefault(self, key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._whole()
        dict.update(self, *args, **kwargs)

    def clear(self) -> None:
        self._whole()
        dict.clear(self)

    def popitem(self) -> tuple[str, Any]:
        self._whole()
        return dict.popitem(self)

    def plain(self) -> dict[str, Any]:
        """The values as an ordinary dict (nothing noted)."""
        return dict(dict.items(self))


@dataclass(frozen=True, slots=True)
class Recording:
    """One pass-1 render of a segment: its output, inputs and effects, for `replay` in pass 2."""

    output: SegmentOutput
    seen: tuple[dict[str, Any], dict[str, Any]]  # local, global: key -> value first seen (or ABSENT)
    effects: tuple[dict[str, Any], dict[str, Any]]  # local, global: key -> value left (or ABSENT)
    warnings: tuple[str, ...]
    unknown: tuple[str, ...]
    evaluations: int  # the pass's count when the segment started
    spent: int  # evaluations the segment used


def finish_recording(
    output: SegmentOutput,
    watched: tuple[WatchedValues, WatchedValues],
    *,
    warnings: list[str],
    unknown: list[str],
    evaluations: int,
    spent: int,
) -> Recording | None:
    """The segment's recording (None when it looked at a whole namespace); the watch restarts."""
    opaque = any(values.opaque for values in watched)
    recording = None
    if not opaque:
        recording = Recording(
            output=output,
            seen=(watched[0].seen, watched[1].seen),
            effects=tuple(  # type: ignore[arg-type]
                {key: dict.get(values, key, ABSENT) for key in values.wrote} for values in watched
            ),
            warnings=tuple(warnings),
            unknown=tuple(unknown),
            evaluations=evaluations,
            spent=spent,
        )
    for values in watched:
        values.start()
    return recording


def still_holds(recording: Recording, namespaces: tuple[Any, Any], evaluations: int, budget: int) -> bool:
    """True when pass 2, with these namespaces and this evaluation count, would render the same."""
    if recording.evaluations + recording.spent > budget or evaluations + recording.spent > budget:
        return False  # the budget ran out inside the segment in one pass or could in the other
    for namespace, seen in zip(namespaces, recording.seen, strict=True):
        values = namespace.values
        for key, before in seen.items():
            now = values.get(key, ABSENT)
            if before is ABSENT:
                if now is not ABSENT or _forwarded(namespace, key):
                    return False
            elif now is ABSENT or not same_value(now, before):
                return False
    return True


def _forwarded(namespace: Any, key: str) -> bool:
    """True when a read of the absent `key` would see its S1 value in this namespace."""
    forward = namespace.forward
    return (
        forward is not None
        and key in forward
        and key not in namespace.initial
        and key not in namespace.written
    )


def replay(recording: Recording, namespaces: tuple[Any, Any]) -> None:
    """Apply the segment's effects to pass 2's namespaces (the caller adds warnings and counts)."""
    for namespace, effects in zip(namespaces, recording.effects, strict=True):
        for key, value in effects.items():
            if value is ABSENT:
                namespace.delete(key)
            else:
                namespace.write(key, value)


def same_value(a: Any, b: Any) -> bool:
    """Equal and rendered alike: same types all the way down (1 == 1.0 == True would not do)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is list:
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if kind is dict:
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    if kind is float:
        return repr(a) == repr(b)
    return a == b
