"""The placing steps (docs/assembly.md#order-of-work): what lands inside the chat, the budget, depth
injection, the terminal note, the closing items and the squash."""

from __future__ import annotations

from dataclasses import replace
from operator import attrgetter

from ..buckets import BucketDocument
from ..compiled import CompiledPreset
from ..macros import render_texts
from ..parts import Injection, Item, Part, assembler_source, card_source
from ..st_format import PromptSettings
from ..worldinfo import CARD_DEPTH_INDEX
from .authors_note import place_authors_note
from .generation import closing_items
from .injection import place_injections, tail_injections
from .messages import squash_kept, trim_to_budget
from .native import doc_reuse, history_run, macro_env
from .rearrange import plan_reuse, without_main_slot
from .state import State

_ROLE = attrgetter("role")
SAMPLE_NOTE = (
    "(The dialogues above are style examples for reference only; they are not the conversation to "
    "continue. Reply to the latest message of the real conversation.)"
)


def in_chat(state: State) -> None:
    """What lands inside the chat besides the preset's @depth nodes: World Info's entries at a depth,
    the Author's Note, the tail directives, the card's depth prompt. A continued message leaves the
    history first (it moves to the very end, docs/assembly.md#generation-types-and-prefill). Without a
    chat nothing lands in it."""
    doc, arrangement, notes = state.doc, state.arrangement, state.notes
    wi = state.world_info
    if wi is not None:
        arrangement.injections.extend(wi.injections)
    place_authors_note(arrangement, doc, _authors_note_text(state), notes)
    without_main_slot(arrangement)
    if doc.generation_type == "continue" and arrangement.history and arrangement.history[-1].history:
        history = list(arrangement.history)  # maybe a kept walk's tuple (`Arrangement.history`)
        state.continued = history.pop()
        arrangement.history = history
    stm = state.request.stm
    directives = [*doc.tail_directives, *([stm.tail_directive] if stm and stm.tail_directive else [])]
    if directives:
        arrangement.injections.extend(tail_injections(directives))
    depths = state.depth_prompts
    if not depths and state.card is not None and state.card.depth_prompt is not None:
        depths = (state.card.depth_prompt,)
    for depth in depths:
        # after the preset's own injections and World Info's Author's Note entries (SillyTavern's order)
        source = card_source("depth_prompt")
        arrangement.injections.append(
            Injection(depth.prompt, depth.depth, 100, CARD_DEPTH_INDEX, depth.role, source)
        )
    if not arrangement.chat:  # chatHistory disabled or absent: SillyTavern 1.18 sends no chat
        for injection in arrangement.injections:
            notes.omit(
                f"An in-chat {injection.role} message at depth {injection.depth}.",
                "The preset sends no chat (its chatHistory is disabled or absent), so nothing is placed in it.",
                injection.source,
            )
        arrangement.injections.clear()


def budget(state: State) -> None:
    """Whole sample pairs, then the oldest history messages, trimmed to the document's budget."""
    doc = state.doc
    if doc.budget is not None:
        trim_to_budget(
            state.arrangement, doc.budget, state.request.encoding, state.notes, doc=doc, seed=state.seed
        )


def inject(state: State) -> None:
    """Depth injections and tail directives into (or after) the history (docs/assembly.md#depth-injection)."""
    arrangement = state.arrangement
    state.injected = bool(arrangement.injections)
    preset = state.preset
    if (
        state.continued is not None
        and state.style == "standalone"
        and preset is not None
        and not preset.settings.continue_prefill
    ):
        # SillyTavern 1.18 places depth injections with the continued message still in the chat, then
        # takes it out: each one deeper than 0 lands one message nearer the end (the continue nudge)
        arrangement.injections[:] = [
            replace(injection, depth=injection.depth - 1) if injection.depth > 0 else injection
            for injection in arrangement.injections
        ]
    arrangement = place_injections(arrangement, state.style, doc_reuse(state.doc))
    wi = state.world_info
    if wi is not None and wi.injected_changes:  # injected entries a World Info script changed
        arrangement.history = wi.mark_injected(list(arrangement.history))
        arrangement.after = wi.mark_injected(arrangement.after)
    state.arrangement = arrangement


def terminal_note(state: State) -> None:
    """The final order, and a user-role note when it ends on a sample dialogue."""
    arrangement = state.arrangement
    before = len(arrangement.before)
    ordered = [*arrangement.before, *arrangement.history, *arrangement.after]
    state.history = (before, before + len(arrangement.history))
    state.ordered = ordered
    if not ordered or ordered[-1].tag != "DIALOGUE_SAMPLE":
        return
    state.sample_note = True
    noted = (assembler_source("sample_note"),)
    preset = state.preset
    if preset is None:
        ordered.append(Item(tag="", role="user", parts=(Part(SAMPLE_NOTE, noted, False),)))
    else:  # the same item on every assembly with the preset (engine/assemble/reuse.py)
        reuse = plan_reuse(preset, state.doc.generation_type)
        ordered.append(reuse.item("sample_note", "", "user", SAMPLE_NOTE, noted, trusted=False))


def closing(state: State) -> None:
    """What the turn adds at the end (docs/assembly.md#generation-types-and-prefill)."""
    doc, preset = state.doc, state.preset
    if _closes_nothing(doc, preset):
        return
    closing = closing_items(
        doc,
        preset.settings if preset is not None else PromptSettings(),
        continued=state.continued,
        continued_text=_continued_text(state),
        provider=state.request.provider,
        env=macro_env(doc, state.items, server_id=state.request.server_id),
        seed=state.seed,
        variables=state.variables,
        global_variables=state.global_variables,
        notes=state.notes,
    )
    if closing.render is not None:
        state.variables = closing.render.variables
        state.global_variables = closing.render.global_variables
    state.ordered = closing.after(state.ordered)


def _closes_nothing(doc: BucketDocument, preset: CompiledPreset | None) -> bool:
    """A normal turn without a prefill adds nothing at the end."""
    return doc.generation_type == "normal" and (
        preset is None or not preset.settings.assistant_prefill.strip()
    )


def _continued_text(state: State) -> str | None:
    """The continued message's own text (after the prompt regex scripts), without a speaker's name."""
    history = state.doc.history
    if state.continued is None or not history:
        return None
    last = len(history) - 1
    return state.rewritten[last][0] if last in state.rewritten else history[last].content


def squash(state: State) -> None:
    """SillyTavern's squash on the final list, when the preset asks for it."""
    preset = state.preset
    if preset is None or not preset.settings.squash_system_messages:
        return
    plain = _plain_history(state)
    state.ordered, state.history = squash_kept(
        state.ordered, state.history, state.reuses(), plain_history=plain
    )
    state.history_as_given = plain


def _plain_history(state: State) -> bool:
    """Whether the arranged history is the document's own, with no system message (nothing for the
    squash to join there)."""
    start, stop = state.history
    doc = state.doc
    run = history_run(doc, state.names)
    if stop - start != len(run.items) or not run.items:
        return False
    kept = doc.memo.plain_history
    if state.names in kept:
        plain = kept[state.names]
    else:
        plain = kept[state.names] = None if "system" in map(_ROLE, run.items) else list(run.items)
    if plain is None:
        return False
    # Nothing changed the final list since the terminal note: its history is the arranged one, and a
    # kept walk's tuple found to be the plain history before still is (not compared again).
    arranged = state.arrangement.history
    as_arranged = type(arranged) is tuple and _closes_nothing(doc, state.preset)
    if as_arranged and doc.memo.plain_arranged.get(state.names) is arranged:
        return True
    same = state.ordered[start:stop] == plain
    if same and as_arranged:
        doc.memo.plain_arranged[state.names] = arranged  # type: ignore[assignment]
    return same


def _authors_note_text(state: State) -> str:
    """The document's Author's Note with its macros rendered (after the preset's, with their variables)."""
    text = state.doc.authors_note.text
    if "{{" not in text:  # identity macros are resolved with the rest of the message
        return text
    env = state.preset_env() if state.preset is not None else macro_env(state.doc, state.items)
    render = render_texts(
        [("authors_note", text)],
        env=env,
        seed=state.seed,
        variables=state.variables,
        global_variables=state.global_variables,
    )
    return render.segments[0].text
