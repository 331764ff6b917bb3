"""What assemblies make again and again from the very same items, kept so they are made once.

The preset's own items (`rearrange.Plan.items`: its nodes whose text no render changes) are the
same objects on every assembly with that preset; a document's native items are the same objects
for as long as the document lives. The joined runs the squash makes of them and their messages are
therefore the same each time too: a `Reuse` keeps them, keyed by the items' identities. Each entry
holds its items, so an identity is never reused while the entry is kept.

Two lifetimes, so nothing outlives what it was made from: one `Reuse` per preset plan (in
`CompiledPreset.memo`) for what only the preset's items make, one per document (in `doc.memo`) for
what also takes the document's items. Items made anew by an assembly (wrapped, changed, injected)
are vouched for by neither and are simply built.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..parts import Item, Message, Part, Source

LIMIT = 256  # entries per table; past it the table starts over
VARIANTS = 8  # items kept per key (`Reuse.item`): the texts a drawing node gives in turn
VARIANT_CHARS = 65_536  # a longer text is kept alone under its key


def all_vouched(tables: Sequence[Reuse], items: Iterable[Item]) -> bool:
    """True when one of `tables` vouches for each of `items` (`Reuse.vouches`, in one loop)."""
    for item in items:
        key = id(item)
        for table in tables:
            if key in table.own or key in table.made or key in table.kept:
                break
        else:
            return False
    return True


class Reuse:
    __slots__ = (
        "joined",
        "kept",
        "made",
        "messages",
        "nodes",
        "own",
        "resolved",
        "resquash",
        "runs",
        "spliced",
        "squashed",
        "whole",
        "wraps",
    )

    def __init__(self, own: dict[int, Item] | None = None, kept: set[int] | None = None) -> None:
        self.own: dict[int, Item] = own or {}  # the items this table vouches for, by identity
        self.kept: set[int] = kept if kept is not None else set()  # a document's native items' ids
        self.made: dict[int, Item] = {}  # the joined items it made
        self.joined: dict[tuple[int, ...], tuple[tuple[Item, ...], Item]] = {}
        self.messages: dict[int, tuple[Item, tuple[Any, ...], Message]] = {}
        # the last few items made under each key (`item`): a node that draws among a few texts
        # gets the same item for the same text, and the runs joined of it recur
        self.nodes: dict[Any, list[Item]] = {}
        # what `wrapped` made, with its items and the value it was made with
        self.wraps: dict[Any, tuple[tuple[Item, ...], list[Item], Any]] = {}
        # the messages of a whole run of items before or after the history (messages.to_messages)
        self.runs: dict[tuple[int, ...], tuple[tuple[Item, ...], tuple[Any, ...], tuple[Message, ...]]] = {}
        # per set of names: each trusted part's text with the identity macros resolved (messages._message)
        self.resolved: dict[tuple[Any, ...], dict[int, tuple[Part, str | None]]] = {}
        # per set of names: the last messages of long joined items, by their parts (spliced.py)
        self.spliced: dict[tuple[Any, ...], dict[Any, Any]] = {}
        # the last run of each length squashed, with what went where (resquash.py)
        self.resquash: dict[int, Any] = {}
        # what comes before the history, squashed (messages.squash)
        # (None: made again in place the first time, made whole when it comes back)
        self.squashed: dict[tuple[int, ...], tuple[tuple[Item, ...], tuple[Item, ...] | None]] = {}
        # a whole final list squashed, with the history's range in it (messages.squash_kept)
        self.whole: dict[tuple[int, ...], tuple[tuple[Item, ...], tuple[Item, ...], tuple[int, int]]] = {}

    def resolved_for(self, who: tuple[Any, ...]) -> dict[int, tuple[Part, str | None]]:
        """The parts' texts with names resolved for the names `who` (messages._resolved fills it)."""
        known = self.resolved.get(who)
        if known is None:
            if len(self.resolved) >= 8:  # a document's names rarely change: a few sets at most
                self.resolved.clear()
            known = self.resolved[who] = {}
        return known

    def spliced_for(self, who: tuple[Any, ...]) -> dict[Any, Any]:
        """The last messages of long joined items for the names `who` (engine/assemble/spliced.py)."""
        kept = self.spliced.get(who)
        if kept is None:
            if len(self.spliced) >= 8:
                self.spliced.clear()
            kept = self.spliced[who] = {}
        return kept

    def vouches(self, item: Item) -> bool:
        # An id in `own` or `made` is the held item's: no other live object can have it.
        key = id(item)
        return key in self.own or key in self.made or key in self.kept

    def item(
        self,
        key: Any,
        tag: str,
        role: str,
        text: str,
        sources: tuple[Source, ...],
        *,
        squash: bool = True,
        trusted: bool = True,
    ) -> Item:
        """An item of one part (trusted unless said) made under `key` (a rendered node's position, a
        setting's name): one made before under it when it would be equal (a render that gave the same
        text: the last few texts are kept, for a node that draws), else a new one, kept for next time."""
        made_for = self.nodes.get(key)
        if made_for is None:
            made_for = self.nodes[key] = []  # the keys are the preset's nodes and settings: a bounded set
        for last in made_for:  # compared, not hashed: a drawn text is new each time, and may be long
            part = last.parts[0]
            if (
                part.text == text
                and part.sources == sources
                and last.role == role
                and last.tag == tag
                and last.squash == squash
                and part.trusted == trusted
            ):
                return last
        while made_for and (len(made_for) >= VARIANTS or len(text) > VARIANT_CHARS):
            self.own.pop(id(made_for.pop(0)), None)  # the oldest
        made = Item(tag, role, (Part(text, sources, trusted),), squash=squash)
        made_for.append(made)
        self.own[id(made)] = made
        return made

    def wrapped(
        self, key: Any, items: Sequence[Item], wrap: Callable[[], list[Item]], *, value: Any = None
    ) -> list[Item]:
        """`wrap()` (new items made from `items` and `value`, a text say), made once for these very
        `items` and an equal `value` under `key`."""
        found = self.wraps.get(key)
        if (
            found is not None
            and len(found[0]) == len(items)
            and all(map(operator.is_, found[0], items))
            and found[2] == value
        ):
            return found[1]
        made = wrap()
        if found is not None:  # replaced: its items are no longer vouched for
            for item in found[1]:
                self.own.pop(id(item), None)
        if len(self.wraps) >= LIMIT:
            self.wraps.clear()
        self.wraps[key] = (tuple(items), made, value)
        for item in made:
            self.own[id(item)] = item
        return made

    def join(self, chain: tuple[Item, ...], joined: Item) -> None:
        if len(self.joined) >= LIMIT:
            self.joined.clear()
            self.made.clear()
        self.joined[tuple(map(id, chain))] = (chain, joined)
        self.made[id(joined)] = joined

    def keep_squashed(
        self, key: tuple[int, ...], entry: tuple[tuple[Item, ...], tuple[Item, ...] | None]
    ) -> None:
        if len(self.squashed) >= LIMIT:
            self.squashed.clear()
        self.squashed[key] = entry

    def keep_resquash(self, size: int, entry: Any) -> None:
        if len(self.resquash) >= LIMIT and size not in self.resquash:
            self.resquash.clear()
        self.resquash[size] = entry

    def keep_whole(
        self, key: tuple[int, ...], entry: tuple[tuple[Item, ...], tuple[Item, ...], tuple[int, int]]
    ) -> None:
        if len(self.whole) >= LIMIT:
            self.whole.clear()
        self.whole[key] = entry

    def keep_run(
        self, key: tuple[int, ...], entry: tuple[tuple[Item, ...], tuple[Any, ...], tuple[Message, ...]]
    ) -> None:
        if len(self.runs) >= LIMIT:
            self.runs.clear()
        self.runs[key] = entry

    def message(self, item: Item, who: tuple[Any, ...], message: Message) -> None:
        if len(self.messages) >= LIMIT:
            self.messages.clear()
        self.messages[id(item)] = (item, who, message)
