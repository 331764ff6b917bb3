"""Reusing a whole render of a preset's segments when a new one would read the same inputs.

A render is a pure function of what it reads: the MacroEnv fields its macros ask for, the seed
(only when it draws), the clock (never reused), and the variable state it starts from. A render
that may be kept runs with its env behind `ReadsEnv`, which notes each field read; it is kept with
those fields' values. A later render of the same segments that starts from equal variables, with
the same seed if it drew, and finds every noted field equal, would take the same branches and
produce the same output: it gets the kept one. A preset whose macros read only the summary, the
variables and its own setvars (most shared presets) renders once per summary; one that reads the
last message renders anew each message, after a lookup.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .env import MacroEnv, RenderOutput

SEED = "\0seed"  # noted when a render draws ({{random}}, {{roll}})
CLOCK = "\0clock"  # noted when a render reads the time: such a render is never kept
MAX_ENTRIES = 4  # per preset plan: a few summaries or seeds in turn
_SCALARS = (str, int, float, bool, type(None))


class ReadsEnv:
    """A MacroEnv that notes the name of each field read through it in `read`."""

    __slots__ = ("_env", "read")

    def __init__(self, env: MacroEnv, read: set[str]) -> None:
        self._env = env
        self.read = read

    def __getattr__(self, name: str) -> Any:
        self.read.add(name)
        return getattr(self._env, name)


@dataclass(slots=True)  # one per render kept: not frozen (cheaper to make), never changed all the same
class _Entry:
    local: Mapping[str, Any]
    global_: Mapping[str, Any]
    label: bool
    seed: int | None  # None: the render did not draw
    fields: tuple[tuple[str, Any], ...]  # the env fields read, with their values
    output: RenderOutput


class RenderMemo:
    """The last few renders of one preset plan's segments."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: tuple[_Entry, ...] = ()

    def find(
        self,
        env: MacroEnv,
        seed: int,
        local: Mapping[str, Any],
        global_: Mapping[str, Any],
        label: bool,
    ) -> RenderOutput | None:
        for entry in self._entries:
            if (
                entry.label == label
                and (entry.seed is None or entry.seed == seed)
                and entry.local == local
                and entry.global_ == global_
                and all(getattr(env, name) == value for name, value in entry.fields)
            ):
                return _own_copy(entry.output)
        return None

    def keep(
        self,
        env: MacroEnv,
        seed: int,
        local: Mapping[str, Any],
        global_: Mapping[str, Any],
        label: bool,
        read: set[str],
        output: RenderOutput,
        *,
        texts_only: bool = False,
    ) -> None:
        """Keep `output` (rendered from these inputs, having read `read`) unless it read the clock or
        its variables hold more than plain values (a list or an object could be changed in place).
        `local` and `global_` are kept as given: the caller hands over dicts it no longer changes.
        `texts_only` says the caller knows every variable, before and after, to be a string."""
        if CLOCK in read:
            return
        plain = texts_only or all(map(_plain, (local, global_, output.variables, output.global_variables)))
        if not plain:
            return
        fields = (
            tuple((name, frozen_value(getattr(env, name))) for name in sorted(read - {SEED})) if read else ()
        )
        entry = _Entry(
            local,
            global_,
            label,
            seed if SEED in read else None,
            fields,
            _own_copy(output),
        )
        self._entries = (entry, *self._entries[: MAX_ENTRIES - 1])  # replaced whole: safe between threads


def _own_copy(output: RenderOutput) -> RenderOutput:
    """`output` with variable dicts of its own: whoever holds it may go on from them."""
    return RenderOutput(
        output.segments,
        dict(output.variables),
        dict(output.global_variables),
        output.warnings,
        output.unknown_macros,
    )


def _plain(values: Mapping[str, Any]) -> bool:
    return not values or all(isinstance(value, _SCALARS) for value in values.values())


def frozen_value(value: Any) -> Any:
    if type(value) is str:
        return value
    return dict(value) if isinstance(value, Mapping) else value
