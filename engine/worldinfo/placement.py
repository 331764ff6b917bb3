"""docs/worldinfo.md#placement: where activated World Info entries land in the prompt.

`place` turns the activated entries (their rendered texts) into what the assembler adds: the text of
the two World Info blocks (before/after char), depth injections (positions 2, 3 and 4), sample
dialogues (positions 5/6) and outlet texts (7). Every piece keeps its entry as its source, and the
regex scripts that changed the entry with its text before them (docs/regex.md#where-they-run).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from engine.parts import Transform
from engine.vocabulary import ROLES
from engine.worldinfo.activate import Activated

AUTHORS_NOTE_DEPTH = 4  # SillyTavern's default Author's Note depth
# @depth entries rank after every Author's Note entry with a slot between them: at one depth and role
# SillyTavern sends the Author's Note, then the card's depth prompt, then the @depth entries.
DEPTH_RANKS = 1 << 20
AN_BOTTOM_RANKS = 1 << 19  # the Author's Note's bottom entries, after its top ones
BEFORE, AFTER, AN_TOP, AN_BOTTOM, AT_DEPTH, EXAMPLES_TOP, EXAMPLES_BOTTOM, OUTLET = range(8)
NOTE_POSITIONS = (AN_TOP, AN_BOTTOM)  # the entries that go with the Author's Note
_TURN = re.compile(r"^\s*(\{\{user\}\}|\{\{char\}\}|<USER>|<BOT>)\s*:\s?", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class EntrySource:
    """Which entry a piece of text came from (the `{"kind": "world_info", …}` source)."""

    book: str
    uid: int
    comment: str


@dataclass(frozen=True, slots=True)
class Change:
    """What the World Info regex scripts did to one entry: which scripts, and its text before them."""

    transforms: tuple[Transform, ...]
    original: str


@dataclass(frozen=True, slots=True)
class Piece:
    """One entry's rendered text."""

    text: str
    source: EntrySource
    change: Change | None = None


@dataclass(frozen=True, slots=True)
class DepthPiece:
    """One entry's text to inject at `depth` with `role`; `rank` keeps the entries' order."""

    text: str
    depth: int
    role: str
    rank: int
    source: EntrySource
    change: Change | None = None


@dataclass(frozen=True, slots=True)
class ExamplePair:
    """One sample dialogue pair parsed from an example-message entry."""

    user: str
    char: str
    source: EntrySource
    change: Change | None = None
    before: tuple[str, str] | None = None  # with a change: this pair before the scripts, when it lines up


@dataclass(frozen=True, slots=True)
class Placement:
    """Everything World Info adds to one assembly."""

    before: tuple[Piece, ...] = ()
    after: tuple[Piece, ...] = ()
    injections: tuple[DepthPiece, ...] = ()
    examples_top: tuple[ExamplePair, ...] = ()
    examples_bottom: tuple[ExamplePair, ...] = ()
    outlets: Mapping[str, tuple[Piece, ...]] = field(default_factory=dict)

    def outlet_texts(self) -> dict[str, str]:
        """Each outlet's text: its entries joined with newlines."""
        return {name: "\n".join(p.text for p in pieces) for name, pieces in self.outlets.items()}


def source_of(item: Activated) -> EntrySource:
    """The source record of an activated entry."""
    e = item.entry.entry
    return EntrySource(book=item.entry.book, uid=e.uid, comment=e.comment)


def place(
    activated: Sequence[Activated],
    texts: Mapping[int, str] | None = None,
    changes: Mapping[int, Change] | None = None,
) -> Placement:
    """Where each activated entry goes; `texts` (by index in `activated`) overrides the rendered text,
    and `changes` (by the same index) says which regex scripts changed it.

    Within each position entries go by `order` ascending (a higher order sits nearer the end), equal
    orders in the reverse of their activation, as SillyTavern 1.18 places them
    (docs/assembly.md#what-sillytavern-118-corrected); example entries at the top go in the opposite order
    (SillyTavern adds each in front of the dialogues) and outlets by `order` descending, equal orders as
    activated. Empty texts are dropped.
    """
    ranked = sorted(range(len(activated)), key=lambda i: (activated[i].entry.entry.order, -i))
    before: list[Piece] = []
    after: list[Piece] = []
    top: list[DepthPiece] = []
    bottom: list[DepthPiece] = []
    depth: list[DepthPiece] = []
    ex_top: list[ExamplePair] = []
    ex_bottom: list[ExamplePair] = []
    outlets: dict[str, list[tuple[int, int, Piece]]] = {}
    for rank, index in enumerate(ranked):
        item = activated[index]
        e = item.entry.entry
        text = (texts or {}).get(index, item.content)
        if not text.strip():
            continue
        source = source_of(item)
        change = changes.get(index) if changes else None
        piece = Piece(text, source, change)
        if e.position == BEFORE:
            before.append(piece)
        elif e.position == AFTER:
            after.append(piece)
        elif e.position in (AN_TOP, AN_BOTTOM):
            target = top if e.position == AN_TOP else bottom
            target.append(DepthPiece(text, AUTHORS_NOTE_DEPTH, "system", rank, source, change))
        elif e.position == AT_DEPTH:
            depth.append(DepthPiece(text, max(0, e.depth), ROLES[e.role or 0], rank, source, change))
        elif e.position in (EXAMPLES_TOP, EXAMPLES_BOTTOM):
            pairs = parse_examples(text, source, change)
            if e.position == EXAMPLES_TOP:
                ex_top[:0] = pairs
            else:
                ex_bottom.extend(pairs)
        elif e.position == OUTLET and e.outlet_name:
            outlets.setdefault(e.outlet_name, []).append((-e.order, index, piece))
    # Author's Note entries: one system injection at depth 4, top entries before bottom ones.
    notes = [
        DepthPiece(p.text, p.depth, p.role, (AN_BOTTOM_RANKS if k >= len(top) else 0) + k, p.source, p.change)
        for k, p in enumerate([*top, *bottom])
    ]
    return Placement(
        before=tuple(before),
        after=tuple(after),
        injections=(
            *notes,
            *[DepthPiece(p.text, p.depth, p.role, DEPTH_RANKS + p.rank, p.source, p.change) for p in depth],
        ),
        examples_top=tuple(ex_top),
        examples_bottom=tuple(ex_bottom),
        outlets={
            name: tuple(piece for _, _, piece in sorted(pieces, key=lambda op: op[:2]))
            for name, pieces in outlets.items()
        },
    )


def parse_examples(text: str, source: EntrySource, change: Change | None = None) -> list[ExamplePair]:
    """Example dialogue (`<START>` blocks of `{{user}}:` / `{{char}}:` lines) as user/char pairs.

    Lines without a speaker continue the previous turn; a turn without its partner makes a pair with
    an empty other side. With a `change`, each pair the scripts changed carries them and the pair at
    the same place in the entry's text before them (every pair carries them, with the whole text as
    the original, when the scripts changed the number of pairs).
    """
    pairs = _pairs(text, source)
    if change is None:
        return pairs
    before = _pairs(change.original, source)
    aligned = len(before) == len(pairs)
    if not aligned:
        return [replace(pair, change=change) for pair in pairs]
    return [
        pair
        if (pair.user, pair.char) == (old.user, old.char)
        else replace(pair, change=change, before=(old.user, old.char))
        for pair, old in zip(pairs, before, strict=True)
    ]


def _pairs(text: str, source: EntrySource) -> list[ExamplePair]:
    pairs: list[ExamplePair] = []
    for block in re.split(r"<START>", text, flags=re.IGNORECASE):
        turns: list[list[str]] = []  # [speaker, text]
        for line in block.split("\n"):
            match = _TURN.match(line)
            if match:
                speaker = "user" if match.group(1).lower() in ("{{user}}", "<user>") else "char"
                turns.append([speaker, line[match.end() :]])
            elif turns:
                turns[-1][1] += "\n" + line
        user = ""
        for speaker, said in turns:
            said = said.strip()
            if speaker == "user":
                if user:
                    pairs.append(ExamplePair(user, "", source))
                user = said
            else:
                pairs.append(ExamplePair(user, said, source))
                user = ""
        if user:
            pairs.append(ExamplePair(user, "", source))
    return pairs
