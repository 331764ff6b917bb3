"""The steps from the openers to the messages, done once per document for the very same inputs
(docs/assembly.md#the-kept-tail).

A bot that asks again for the same conversation (a swipe, a regenerate, a preview shown again) gets a
fresh seed, and the render runs anew; when the walk then finds its arrangement as before
(rearrange.kept_walk hands over the same snapshot), and nothing the later steps read has changed
or draws on the seed, those steps make the same final list and messages as last time. They are kept
with the document the second time the same inputs come (a document assembled once pays a look-up and
no copy) and handed over from the third.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..macros import depends_on_seed
from ..parts import Item, Message, Omission
from .examples import SAMPLE_TAG
from .state import State

Run = Callable[[State], None]


class _Inputs(NamedTuple):
    """What the tail reads besides the document (the memo is the document's own), by identity where
    an object: the walk's snapshot, the preset, the native items, the stored memory; and the values."""

    snapshot: object
    preset: object
    items: object
    stm: object
    style: str
    names: int
    separator: str
    new_chat: str


class _Outputs(NamedTuple):
    """What the tail made: the state's fields it sets, and the notes it added."""

    ordered: tuple[Item, ...]
    history: tuple[int, int]
    history_as_given: bool
    sample_note: bool
    injected: bool
    messages: tuple[Message, ...]
    blank: tuple[Item, ...]
    warnings: tuple[str, ...]
    omitted: tuple[Omission, ...]


DRAWS = "draws"  # what `_recorded` gives for a result that draws on the seed


def kept_tail(steps: Sequence[Run]) -> Run:
    """One step doing `steps` (the tail, for a request with no card, group, history scripts, World
    Info, budget or closing items), or handing over what they made for the same inputs before."""
    tail = tuple(steps)

    def run(state: State) -> None:
        inputs = _inputs(state)
        if inputs is None:
            for step in tail:
                step(state)
            return
        memo = state.doc.memo
        found = memo.tail
        if found is None or not _same(found[0], inputs):
            memo.tail = (inputs, None)  # the first time: noted only
            for step in tail:
                step(state)
        elif found[1] is None:  # the second time: kept, unless it draws on the seed
            memo.tail = (inputs, _recorded(state, tail))
        elif found[1] is DRAWS:  # it draws: done anew every time, never looked at again
            for step in tail:
                step(state)
        else:
            _hand_over(state, found[1])

    return run


def _inputs(state: State) -> _Inputs | None:
    """The tail's inputs, or None when the walk's arrangement was not a kept one or the Author's Note
    renders macros (its text then depends on the render's variables)."""
    snapshot = state.arrangement.kept
    formats = state.formats
    if snapshot is None or formats is None or "{{" in state.doc.authors_note.text:
        return None
    return _Inputs(
        snapshot,
        state.preset,
        state.items,
        state.request.stm,
        state.style,
        state.names,
        formats.new_example_chat,
        formats.new_chat,
    )


def _same(kept: _Inputs, inputs: _Inputs) -> bool:
    return (
        kept.snapshot is inputs.snapshot
        and kept.preset is inputs.preset
        and kept.items is inputs.items
        and kept.stm is inputs.stm
        and kept.style == inputs.style
        and kept.names == inputs.names
        and kept.separator == inputs.separator
        and kept.new_chat == inputs.new_chat
    )


def _recorded(state: State, tail: tuple[Run, ...]) -> _Outputs | str:
    """Run the tail and return what it made, or `DRAWS` when the result draws on the seed: a sample
    dialogue's or a trusted part's single-brace random form (identity macros are resolved in trusted
    parts only, engine/assemble/messages.py)."""
    arrangement, notes = state.arrangement, state.notes
    drawn = any(
        part.trusted and depends_on_seed(part.text)
        for run in (arrangement.before, arrangement.after)
        for item in run
        if item.tag == SAMPLE_TAG
        for part in item.parts
    )
    warned, omitted = len(notes.warnings), len(notes.omitted)
    for step in tail:
        step(state)
    if drawn or any(
        part.trusted and depends_on_seed(part.text) for item in state.ordered for part in item.parts
    ):
        return DRAWS
    return _Outputs(
        tuple(state.ordered),
        state.history,
        state.history_as_given,
        state.sample_note,
        state.injected,
        state.messages,
        tuple(state.blank),
        tuple(notes.warnings[warned:]),
        tuple(notes.omitted[omitted:]),
    )


def _hand_over(state: State, made: _Outputs) -> None:
    state.ordered = list(made.ordered)
    state.history, state.history_as_given = made.history, made.history_as_given
    state.sample_note, state.injected = made.sample_note, made.injected
    state.messages, state.blank = made.messages, list(made.blank)
    notes = state.notes
    for sentence in made.warnings:
        notes.warn(sentence)
    notes.omitted.extend(made.omitted)
