"""A channel's variable cache under Luker's replay (docs/channels.md#variables).

A stored channel conversation has two sources of variables: the write ops recorded on its messages
and what the preset, World Info and the card write when a prompt is rendered. The cache holds both.
A structural change (a deletion, an edit, a swipe switched or deleted, a member forgotten) recomputes
only the keys the surviving ops mention, from the channel's base state (empty unless messages have
expired) and those ops in order; every other key stays as the renders left it, except a key that
only removed ops mentioned, which is removed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .replay import Op, Replay, apply_op


def mentioned_keys(ops: Iterable[Op]) -> set[str]:
    """The cache keys `ops` may touch: each op's key and, for a dotted key, its head (the variable a
    path write lands in when the head holds JSON)."""
    keys: set[str] = set()
    for op in ops:
        keys.add(op.key)
        if "." in op.key:
            keys.add(op.key.split(".", 1)[0].strip())
    return keys


def replay_into_cache(
    cache: Mapping[str, Any],
    *,
    base: Mapping[str, Any],
    removed: Iterable[Op],
    surviving: Sequence[Sequence[Op]],
) -> Replay:
    """The cache after a structural change: the keys `surviving` ops (message by message, in order)
    mention take the value the replay from `base` gives (or go when it gives none); keys only
    `removed` ops mentioned go; every other key of `cache` is kept."""
    state: dict[str, Any] = dict(base)
    warnings: list[str] = []
    flat = [op for ops in surviving for op in ops]
    for op in flat:
        warning = apply_op(state, op)
        if warning:
            warnings.append(warning)
    recomputed = mentioned_keys(flat) | set(base)
    gone = mentioned_keys(removed) - recomputed
    result = {key: value for key, value in cache.items() if key not in recomputed and key not in gone}
    for key in recomputed:
        if key in state:
            result[key] = state[key]
    return Replay(result, tuple(warnings))
