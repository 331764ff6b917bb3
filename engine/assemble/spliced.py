"""The message of a long joined item (the squash's run of a preset's system nodes) made again from
the last one's pieces when most of its parts are the very same objects.

A preset whose nodes draw (`{{random}}`, the clock) joins a run of dozens of nodes around the drawn
texts on every assembly; the joined item is new each time, but only the drawn nodes' parts are. Its
message is then the last one's with those parts' texts put in their places: each part's resolved text,
sources and piece are kept per position, and only the changed parts (and those whose identity macros
draw on the seed) are resolved again. The message is the one `messages._message` builds from the
item, piece for piece.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..parts import Item, Message, Part, Source

MIN_PARTS = 8  # shorter items are built whole: nothing to gain
LIMIT = 64  # kept items per document and names; past it the table starts over

Resolve = Callable[[Part], tuple[str, bool]]  # a trusted part's text with names, and whether it drew


@dataclass(slots=True)
class _Pieces:
    """A built message's parts, and per part: its text as sent, its piece (None: none), whether it drew."""

    parts: tuple[Part, ...]
    texts: list[str]
    pieces: list[tuple[Source, str] | None]
    seeded: list[int]  # the positions whose text drew on the seed
    sources: tuple[Source, ...]


def spliced_message(
    item: Item, resolve: Resolve, kept: dict[Any, _Pieces]
) -> tuple[Message | None, bool] | None:
    """`item`'s message and whether it drew on the seed, made from the last message kept in `kept` for an
    item of as many parts starting with the same part; None when a part has transforms or an original
    text (the caller builds it whole). The new message's pieces are kept in its place."""
    parts = item.parts
    key = (id(parts[0]), len(parts))
    before = kept.get(key)
    if before is None or before.parts[0] is not parts[0]:
        made = _built(parts, resolve)
    else:
        made = _respliced(before, parts, resolve)
    if made is None:
        return None
    if len(kept) >= LIMIT and key not in kept:
        kept.clear()
    kept[key] = made
    content = "".join(made.texts)
    seeded = bool(made.seeded)
    if not content.strip():
        return None, seeded
    pieces = tuple(filter(None, made.pieces))
    message = Message(item.role, content, made.sources, item.tag, item.history, pieces, (), (), item.name)
    return message, seeded


def _text(part: Part, resolve: Resolve) -> tuple[str, bool]:
    return resolve(part) if part.trusted else (part.text, False)


def _changed(part: Part) -> bool:
    """A part with transforms or an original text: its item is built whole."""
    return bool(part.transforms) or part.original is not None


def _built(parts: tuple[Part, ...], resolve: Resolve) -> _Pieces | None:
    if any(map(_changed, parts)):
        return None
    texts: list[str] = []
    pieces: list[tuple[Source, str] | None] = []
    seeded: list[int] = []
    sources: dict[Source, None] = {}
    for at, part in enumerate(parts):
        text, drew = _text(part, resolve)
        texts.append(text)
        if drew:
            seeded.append(at)
        if part.sources:
            sources.update(dict.fromkeys(part.sources))
            pieces.append((part.sources[0], text) if text else None)
        else:
            pieces.append(None)
    return _Pieces(parts, texts, pieces, seeded, tuple(sources))


def _respliced(before: _Pieces, parts: tuple[Part, ...], resolve: Resolve) -> _Pieces | None:
    """`before` with the parts that are not the same objects (and those that drew) made again."""
    old = before.parts
    changed = [at for at, part in enumerate(parts) if part is not old[at]]
    if any(_changed(parts[at]) for at in changed):
        return None
    if any(parts[at].sources != old[at].sources for at in changed):
        return _built(parts, resolve)  # another order of sources: counted whole
    texts, pieces = list(before.texts), list(before.pieces)
    seeded = [at for at in before.seeded if parts[at] is old[at]]
    for at in sorted({*changed, *seeded}):
        part = parts[at]
        text, drew = _text(part, resolve)
        texts[at] = text
        if drew and at not in seeded:
            seeded.append(at)
        if part.sources:
            pieces[at] = (part.sources[0], text) if text else None
    seeded.sort()
    return _Pieces(parts, texts, pieces, seeded, before.sources)
