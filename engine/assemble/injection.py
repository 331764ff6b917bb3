"""Depth injection (docs/assembly.md#depth-injection): place depth-injected texts relative to the end of the
history.

Two styles. `merge` appends each batch to an existing history item as `\\n[System: …]` (strict
providers never see an extra message); `standalone` inserts new messages the way SillyTavern does.
Tail directives (docs/assembly.md#the-bucket-document) are placed like a depth-1 injection that sorts after
every node.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from ..parts import Injection, Item, Part, assembler_source
from ..worldinfo import AN_BOTTOM_INDEX, CARD_DEPTH_INDEX
from .rearrange import Arrangement
from .reuse import Reuse

ROLE_ORDER = {"assistant": 0, "user": 1, "system": 2}  # system nearest the end (SillyTavern 1.18)
TAIL_INDEX = 1 << 31  # beyond any 32-bit injection_order: tail directives are lower priority


def tail_injections(directives: Sequence[str]) -> list[Injection]:
    """Tail directives as depth-1 injections that come after every preset node of that depth."""
    return [
        Injection(text, 1, TAIL_INDEX, TAIL_INDEX + k, "system", assembler_source("tail_directive"))
        for k, text in enumerate(directives)
        if text.strip()
    ]


def place_injections(arrangement: Arrangement, style: str, reuse: Reuse | None = None) -> Arrangement:
    """The arrangement with its injections placed into (or after) the history; injections emptied.
    `reuse` (the document's, engine/assemble/reuse.py) keeps each history item merged with a batch, so the same
    batch merged into the same item gives the very same item again."""
    if not arrangement.injections:
        return arrangement
    if style == "standalone":
        return _standalone(arrangement)
    return _merge(arrangement, reuse)


def _merge(arr: Arrangement, reuse: Reuse | None = None) -> Arrangement:
    history = list(arr.history)
    ordered = sorted(arr.injections, key=lambda inj: (-inj.depth, inj.order, inj.index))
    if not history:
        # Nothing to merge into: one trailing user item, never dropped.
        part = _batch_part(ordered, lead="")
        trailing = Item(tag="", role="user", parts=(part,))
        return Arrangement(before=arr.before, history=[], after=[*arr.after, trailing])
    batches: dict[int, list[Injection]] = {}
    for inj in ordered:
        target = max(0, len(history) - 1 - inj.depth)
        batches.setdefault(target, []).append(inj)
    for target, batch in batches.items():
        item = history[target]
        if reuse is None:
            history[target] = _merged(item, batch)[0]
            continue
        what = tuple((inj.text, inj.source) for inj in batch)
        history[target] = reuse.wrapped(
            ("merged", target), (item,), partial(_merged, item, batch), value=what
        )[0]
    return Arrangement(before=arr.before, history=history, after=arr.after)


def _merged(item: Item, batch: list[Injection]) -> list[Item]:
    return [item.with_parts((*item.parts, _batch_part(batch, lead="\n")))]


def _batch_part(batch: list[Injection], *, lead: str) -> Part:
    text = lead + "[System: " + "\n".join(inj.text for inj in batch) + "]"
    sources = tuple(dict.fromkeys(inj.source for inj in batch))
    return Part(text=text, sources=sources, trusted=True)


def _standalone(arr: Arrangement) -> Arrangement:
    history = arr.history
    count = len(history)
    # position p = insert before history[p]; exactly `depth` history messages follow it.
    at: dict[int, list[Injection]] = {}
    for inj in arr.injections:
        at.setdefault(count - min(inj.depth, count), []).append(inj)
    placed: list[Item] = []
    for position in range(count + 1):
        for inj_group in _groups(at.get(position, [])):
            placed.extend(inj_group)
        if position < count:
            placed.append(history[position])
    return Arrangement(before=arr.before, history=placed, after=arr.after)


def _joined(same: list[Injection]) -> str:
    """One role's text at one place, as SillyTavern 1.18 joins it: the preset's own injected prompts
    joined with newlines and trimmed as one, then each other prompt SillyTavern keeps as one piece
    (the Author's Note entries, the card's depth prompt, the @depth entries of World Info, each of
    ours) joined and trimmed the same way; all joined with newlines."""
    pieces: dict[object, list[str]] = {}
    for inj in same:  # sorted by index: the preset's, Author's Note, card, @depth, tail directives
        pieces.setdefault(_piece_of(inj), []).append(inj.text)
    if (
        "an_top" in pieces or "an_text" in pieces or "an_bottom" in pieces
    ):  # SillyTavern's note: top, text, bottom
        note = "\n".join("\n".join(pieces.pop(key, ())) for key in ("an_top", "an_text", "an_bottom"))
        pieces = (
            {"authors_note": [note], **pieces}
            if "preset" not in pieces
            else {"preset": pieces.pop("preset"), "authors_note": [note], **pieces}
        )
    return "\n".join(text for text in ("\n".join(texts).strip() for texts in pieces.values()) if text)


def _piece_of(inj: Injection) -> object:
    kind = inj.source.kind
    if kind == "node":
        return "preset"
    if kind == "world_info":
        if inj.index >= CARD_DEPTH_INDEX:
            return "at_depth"
        return "an_bottom" if inj.index >= AN_BOTTOM_INDEX else "an_top"
    if kind == "assembler" and inj.source.name == "authors_note":
        return "an_text"
    return kind if kind == "card" else inj  # the server's own: each apart


def injected_messages(injections: Sequence[Injection]) -> list[tuple[str, str, list[Injection]]]:
    """(role, text, the injections joined) of each message the injections make once placed: one per
    depth, order and role, deeper first, as SillyTavern 1.18 builds them (openai.js,
    populationInjectionPrompts) and counts them against the budget."""
    by_key: dict[tuple[int, int], list[Injection]] = {}
    for inj in sorted(injections, key=lambda i: (-i.depth, i.order, i.index)):
        by_key.setdefault((-inj.depth, inj.order), []).append(inj)
    out = []
    for key in sorted(by_key):
        members = by_key[key]
        for role in sorted({inj.role for inj in members}, key=ROLE_ORDER.__getitem__):
            same = [inj for inj in members if inj.role == role]
            text = _joined(same)
            if text:
                out.append((role, text, same))
    return out


def _groups(injections: list[Injection]) -> list[list[Item]]:
    """Messages for one insertion point: deeper first, then order ascending, one message per role."""
    by_key: dict[tuple[int, int], list[Injection]] = {}
    for inj in sorted(injections, key=lambda i: (-i.depth, i.order, i.index)):
        by_key.setdefault((-inj.depth, inj.order), []).append(inj)
    groups = []
    for key in sorted(by_key):
        members = by_key[key]
        messages = []
        for role in sorted({inj.role for inj in members}, key=ROLE_ORDER.__getitem__):
            same = [inj for inj in members if inj.role == role]
            text = _joined(same)
            if not text:
                continue
            part = Part(text=text, sources=tuple(dict.fromkeys(inj.source for inj in same)), trusted=True)
            messages.append(Item(tag="", role=role, parts=(part,)))
        groups.append(messages)
    return groups
