"""A run of items before or after the history squashed again from the last run of that length when
only some items changed in place (messages._squashed_run).

A preset whose nodes draw on every assembly sends, around the history, runs of dozens of its system
nodes in which only the drawn nodes' items are new. The squash of such a run joins the same items
into the same places as last time when each new item has the role, the `squash` flag, the name and the
emptiness of the one it replaces: the joined items holding a new item get its parts in place of the
old one's, the rest are the last run's. The result equals `messages.squash` of the run, item for item.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..parts import Item, Part

SEPARATOR = Part("\n", (), False)  # what squash puts between two joined system items
LIMIT = 64  # runs kept per document; past it the table starts over


@dataclass(frozen=True, slots=True)
class Squashed:
    """A run and its squash: for each item made, the positions of the run's items in it and where each
    one's parts start in the made item's parts (a joined item's; () for an item kept as it is)."""

    items: tuple[Item, ...]
    made: tuple[Item, ...]
    members: tuple[tuple[int, ...], ...]
    offsets: tuple[tuple[int, ...], ...]


def _blank(item: Item) -> bool:
    """A system item with no text: the squash drops it."""
    parts = item.parts
    return not (parts[0].text if len(parts) == 1 else any(part.text for part in parts))


def squashed(items: Sequence[Item], join: Callable[[list[Item]], Item] | None = None) -> Squashed:
    """SillyTavern's squash of a run without the history (`messages.squash`), noting what went where;
    `join` makes a joined item (`joined` when None: one that may find it made before)."""
    made: list[Item] = []
    members: list[tuple[int, ...]] = []
    offsets: list[tuple[int, ...]] = []
    chain: list[int] = []  # the positions being joined into made[-1]

    def close() -> None:
        if len(chain) > 1:
            run = [items[at] for at in chain]
            made[-1], offsets[-1] = (join(run), _starts(run)) if join is not None else joined(run)
            members[-1] = tuple(chain)

    for at, item in enumerate(items):
        if item.role != "system":
            close()
            chain = []
        elif _blank(item):
            continue
        elif chain and item.squash and not item.name:
            chain.append(at)
            continue
        else:
            close()
            chain = [at] if item.squash and not item.name else []
        made.append(item)
        members.append((at,))
        offsets.append(())
    close()
    return Squashed(tuple(items), tuple(made), tuple(members), tuple(offsets))


def joined(chain: Sequence[Item]) -> tuple[Item, tuple[int, ...]]:
    """The chain's items as one (the first one's fields, every part, a line break between items), and
    where each item's parts start."""
    parts: list[Part] = list(chain[0].parts)
    starts = [0]
    for item in chain[1:]:
        parts.append(SEPARATOR)
        starts.append(len(parts))
        parts += item.parts
    return chain[0].with_parts(tuple(parts)), tuple(starts)


def _starts(chain: Sequence[Item]) -> tuple[int, ...]:
    """Where each item's parts start in the chain's joined item (`joined`)."""
    starts, at = [], 0
    for item in chain:
        starts.append(at)
        at += len(item.parts) + 1
    return tuple(starts)


def resquashed(before: Squashed, items: Sequence[Item]) -> Squashed | None:
    """`squashed(items)` made from `before` (a run as long), or None when an item changed in a way that
    moves the joins (its role, `squash` flag, name, or emptiness) or more than a few changed."""
    old = before.items
    changed = [at for at, item in enumerate(items) if item is not old[at]]
    if len(changed) * 4 > len(items):
        return None
    for at in changed:
        new, was = items[at], old[at]
        if new.role != was.role or new.squash != was.squash or new.name != was.name:
            return None
        if new.role == "system" and _blank(new) != _blank(was):
            return None
    made, offsets = list(before.made), list(before.offsets)
    touched = set(changed)
    for k, members in enumerate(before.members):
        if touched.isdisjoint(members):
            continue
        if len(members) == 1:
            made[k] = items[members[0]]
            continue
        parts = list(made[k].parts)
        for start, at in zip(offsets[k], members, strict=True):
            if at in touched:
                if len(items[at].parts) != len(old[at].parts):
                    made[k], offsets[k] = joined([items[m] for m in members])
                    break
                parts[start : start + len(old[at].parts)] = items[at].parts
        else:
            made[k] = items[members[0]].with_parts(tuple(parts))
    return Squashed(tuple(items), tuple(made), before.members, tuple(offsets))
