"""The last steps (docs/assembly.md#order-of-work, the last three): messages with identity macros
resolved in trusted text, the provider's request body, the token counts; then the `Assembly`."""

from __future__ import annotations

from operator import attrgetter

from ..buckets import BucketDocument
from ..providers import shape as shape_for
from ..sampling import with_generation_settings
from ..worldinfo import NOTE_POSITIONS
from .differences import differences
from .messages import count_tokens_of, to_messages
from .result import Assembly
from .state import State

_TAG = attrgetter("tag")


def identity_macros(state: State) -> None:
    """The final items as messages: `{{user}}`, `{{char}}` and their kin resolved in trusted parts only,
    empty items dropped."""
    state.messages = to_messages(
        state.ordered,
        state.doc,
        state.seed,
        state.history,
        state.names,
        state.blank,
        state.reuses(),
        history_as_given=state.history_as_given,
    )


def shape(state: State) -> None:
    """The provider's request body, with the generation settings meant for it; the settings'
    sentences about values changed to fit join the warnings."""
    request, doc = state.request, state.doc
    provider, generation = request.provider, request.generation
    if provider:
        state.payload = shape_for(
            provider, state.messages, user=doc.user_name, char=doc.char_name, memory_tool=_has_tools(doc)
        )
    if generation is not None:
        for sentence in generation.adjusted:
            state.notes.warn(sentence)
        if state.payload is not None and provider is not None and generation.provider == provider:
            state.payload = with_generation_settings(provider, state.payload, generation)


def count(state: State) -> None:
    """Token counts for the provider's body (or the messages), and a warning past the budget
    (docs/assembly.md#tokens)."""
    request, doc = state.request, state.doc
    tokens = count_tokens_of(
        state.messages,
        state.payload,
        provider=request.provider or request.count_for,
        encoding=request.encoding,
        count_tokens=request.count_tokens,
        names=(doc.user_name, doc.char_name),
    )
    if request.count_tokens and doc.budget is not None and tokens.total > doc.budget.prompt:
        state.notes.warn(
            f"The prompt uses {tokens.total} tokens, over the budget of {doc.budget.prompt} "
            f"(context {doc.budget.context} minus reply {doc.budget.reply})."
        )
    state.tokens = tokens


def result(state: State) -> Assembly:
    """What the steps made, as the caller sees it."""
    doc, preset, notes, wi = state.doc, state.preset, state.notes, state.world_info
    assert state.tokens is not None
    return Assembly(
        mode="native" if preset is None else "preset",
        preset_name=None if preset is None else preset.name,
        style=state.style,
        messages=state.messages,
        warnings=tuple(notes.warnings),
        omitted=tuple(notes.omitted),
        variables=state.variables,
        global_variables=state.global_variables,
        seed=state.seed,
        tokens=state.tokens,
        provider=state.request.provider,
        provider_payload=state.payload,
        budget=doc.budget,
        unknown_macros=state.unknown_macros,
        generation=state.request.generation,
        world_info=wi.explanation() if wi is not None else None,
        differences=differences(
            doc,
            preset,
            _tags_around_history(state),
            style=state.style,
            injected=state.injected,
            blank_dropped=bool(state.blank) and any(item.text for item in state.blank),
            sample_note=state.sample_note,
            authors_note_entries=wi is not None
            and any(a.entry.entry.position in NOTE_POSITIONS for a in wi.activation.activated),
            world_info_notes=wi.activation.sillytavern_differences if wi is not None else (),
            card_book=wi is not None and any(a.entry.is_character for a in wi.activation.activated),
        ),
    )


def _tags_around_history(state: State) -> list[str]:
    """The tags of the messages sent before and after the history: each item there became one message
    unless it came out blank (a native block never sits in the history, so a long chat is not read)."""
    start, stop = state.history
    ordered = state.ordered
    if not state.blank:
        return [*map(_TAG, ordered[:start]), *map(_TAG, ordered[stop:])]
    blank = set(map(id, state.blank))  # the items are alive in `state`: their ids are theirs
    return [item.tag for item in (*ordered[:start], *ordered[stop:]) if id(item) not in blank]


def _has_tools(doc: BucketDocument) -> bool:
    """The bot's model can call tools, so the body declares the memory tool (docs/memory.md)."""
    return doc.stm_context is not None and doc.stm_context.has_tools
