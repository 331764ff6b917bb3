"""The first steps (docs/assembly.md#order-of-work): who speaks, the generation type, the history's
regex scripts, the route, the native items."""

from __future__ import annotations

from dataclasses import replace

from ..buckets import SAMPLE_HEADER
from ..cards import fill_document, prepared_card
from ..groups import group_document
from ..macros import MacroEnv
from ..parts import Transform
from ..regex import apply_to_history, switched
from .generation import with_send_if_empty, without_replaced_reply
from .native import NAMES_DEFAULT, native_items, request_env
from .state import State


def speaker_and_card(state: State) -> None:
    """A group turn's speaker (docs/groups.md), then the active card: its macros run first, so their
    variable writes are what the rest sees, and it fills the document's empty fields (docs/cards.md)."""
    request, doc = state.request, state.doc
    card = request.card
    if request.group is not None and doc.group is not None:
        doc, speaker = group_document(doc, request.group, card)
        card = speaker.card
        state.depth_prompts = speaker.depth_prompts
    if card is not None:
        card, rendered = prepared_card(
            card,
            env=MacroEnv(
                now=doc.now,
                timezone=doc.timezone,
                server_id=request.server_id,
                persona=doc.user_persona,
                **request_env(doc),
            ),
            seed=state.seed,
            variables=doc.variables,
            global_variables=doc.global_variables,
        )
        doc = fill_document(doc, card)
        if rendered is not None:
            doc = replace(doc, variables=rendered.variables, global_variables=rendered.global_variables)
    state.doc, state.card = doc, card


def generation_type(state: State) -> None:
    """A swipe or regenerate drops the reply it replaces, and an empty send may resend the last
    message, before anything is scanned or placed (docs/assembly.md#generation-types-and-prefill)."""
    preset = state.preset
    doc = without_replaced_reply(state.doc, state.notes)
    state.doc = with_send_if_empty(doc, preset.settings if preset is not None else None, state.notes)


def history_scripts(state: State) -> None:
    """The promptOnly regex scripts rewrite history messages (docs/regex.md#where-they-run): the
    request's scripts in running order, else the preset's own enabled ones."""
    scripts = state.request.regex_scripts
    if scripts is None:
        scripts = switched(state.preset.regex_scripts, {}) if state.preset is not None else ()
    state.regex_scripts = tuple(scripts)
    doc = state.doc
    if not scripts or not doc.history:
        return
    request = state.regex_request()
    result = apply_to_history(state.regex_scripts, [(m.role, m.content) for m in doc.history], request)
    for failure in result.failures:
        if not failure.inactive:
            state.notes.warn(f"Regex script “{failure.script}” did not run on the history: {failure.error}")
    state.rewritten = {
        index: (result.texts[index], tuple(Transform(s.label, s.id) for s in changed))
        for index, changed in result.changed_by.items()
    }


def route(state: State) -> None:
    """Impersonation goes native: presets are character-centric."""
    if state.preset is not None and state.doc.impersonation:
        state.notes.warn("Impersonation uses native assembly: presets are character-centric.")
        state.preset = None


def native_items_step(state: State) -> None:
    """The document's blocks as tagged items in the fixed native order (docs/assembly.md#native-order)."""
    preset, stm = state.preset, state.request.stm
    state.names = preset.settings.names_behavior if preset is not None else NAMES_DEFAULT
    state.items = native_items(
        state.doc,
        stm=stm.lines if stm is not None else None,
        sample_header="" if preset is not None else SAMPLE_HEADER,  # a preset sends SillyTavern's separators
        rewritten=state.rewritten,
        names=state.names,
    )
