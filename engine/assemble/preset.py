"""The preset's steps (docs/assembly.md#order-of-work): render its nodes, rearrange the native blocks
into its order, add SillyTavern's openers and a group's nudge. Without a preset they place the native
blocks in the fixed order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from operator import attrgetter
from typing import Any

from ..cards import Card, node_override
from ..compiled import CompiledPreset
from ..macros import Segment, render_segments
from ..parts import Injection, Item, Notes, Part, Source, card_source, native_source, setting_source
from .examples import example_items
from .formats import Formats, render_formats
from .group_nudge import group_nudge, without_node_text
from .native import blocks_of, doc_reuse
from .rearrange import (
    PERSONA_TAG,
    SCENARIO_TAG,
    Plan,
    kept_walk,
    native_arrangement,
    node_is_active,
    plan_of,
    plan_reuse,
    render_memo,
)
from .rearrange import (
    rearrange as rearrange_blocks,
)
from .state import State

_TAG = attrgetter("tag")
_TEXT, _EXPANDED = attrgetter("text"), attrgetter("expanded")


def render(state: State) -> None:
    """Every active content node in node order (docs/macros.md#variables), after World Info's writes:
    the texts by node position, and the card's sources for the nodes whose text the card replaced."""
    request, doc, preset, notes = state.request, state.doc, state.preset, state.notes
    wi = state.world_info
    variables, global_variables = doc.variables, doc.global_variables
    if wi is not None:  # World Info rendered first: its writes and outlets are what the preset sees
        variables, global_variables = wi.variables, wi.global_variables
    if preset is None:
        state.style = request.style or "merge"
        state.variables, state.global_variables = dict(variables), dict(global_variables)
        return
    state.style = request.style or preset.injection_style or "merge"
    if wi is not None:
        _report_unread_outlets(wi.outlets, preset, notes)
    plan = preset.memo.plans.get(doc.generation_type) or plan_of(preset, doc.generation_type)
    segments, card_sources = (
        (plan.segments, {}) if state.card is None else _card_overrides(state.card, preset, plan)
    )
    if plan.plain is not None and not card_sources:  # nothing to render: the texts as they are
        state.rendered = plan.plain[1]
        state.variables, state.global_variables = dict(variables), dict(global_variables)
        return
    output = render_segments(
        segments,
        env=state.preset_env(),
        seed=state.seed,
        variables=variables,
        global_variables=global_variables,
        memo=None
        if card_sources
        else preset.memo.renders.get(doc.generation_type) or render_memo(preset, doc.generation_type),
    )
    for warning in output.warnings:
        notes.warn(warning)
    if output.unknown_macros:
        names = ", ".join(sorted(output.unknown_macros))
        notes.warn(f"Unsupported macros were left as they are: {names}.")
    outputs = output.segments
    state.rendered = dict(zip(plan.render_at, map(_TEXT, outputs), strict=True))
    if outputs:
        state.expanded = frozenset().union(*map(_EXPANDED, outputs))
    state.card_sources = card_sources
    state.variables, state.global_variables = output.variables, output.global_variables
    if output.unknown_macros:
        state.unknown_macros = tuple(sorted(output.unknown_macros))


def rearrange(state: State) -> None:
    """The walk over the preset's nodes places the native blocks and the rendered nodes
    (docs/assembly.md#order-of-work); the format templates are rendered on the way."""
    doc, preset, notes = state.doc, state.preset, state.notes
    if preset is None:
        state.arrangement = native_arrangement(state.items)
        return
    blocks, present = _preset_blocks(state)
    group = doc.group is not None
    kept: dict[tuple[frozenset[str], bool], Formats] = preset.memo.formats
    formats = kept.get((present, group))
    if formats is None:
        formats = render_formats(
            preset.settings,
            present,
            env=state.preset_env(),
            seed=state.seed,
            variables=state.variables,
            global_variables=state.global_variables,
            notes=notes,
            group=group,
        )
        if formats.render is None and len(kept) < 64:  # no macro ran: the same on every assembly
            kept[(present, group)] = formats
        else:  # the openers alone rendered, or the formats too: the same blocks mapping when equal
            formats = _blocks_as_before(preset, (present, group), formats)
    if formats.render is not None:
        state.variables = formats.render.variables
        state.global_variables = formats.render.global_variables
    state.formats = formats
    if state.card_sources:
        state.arrangement = rearrange_blocks(
            blocks,
            preset,
            state.rendered,
            state.expanded,
            notes,
            state.card_sources,
            generation_type=doc.generation_type,
            formats=formats.blocks,
            reuse=doc_reuse(doc),
        )
        return
    state.arrangement = kept_walk(
        doc.memo,
        blocks,
        preset,
        state.rendered,
        state.expanded,
        notes,
        generation_type=doc.generation_type,
        formats=formats.blocks,
        reuse=doc_reuse(doc),
    )


def _blocks_as_before(preset: CompiledPreset, key: Any, formats: Formats) -> Formats:
    """`formats` holding the last render's blocks mapping for `key` when their texts are equal: the
    walk knows its inputs again by that object (rearrange.kept_walk), so a render that gave the same
    texts costs no second walk."""
    last: dict[Any, Mapping[str, str]] = preset.memo.format_blocks
    before = last.get(key)
    if before is not None and before == formats.blocks:
        return replace(formats, blocks=before)
    if len(last) < 64:
        last[key] = formats.blocks
    return formats


def openers(state: State) -> None:
    """SillyTavern's openers (docs/assembly.md#what-sillytavern-118-corrected): each sample dialogue as
    its separator and named turns, and the new-chat prompt right before the history when the preset's
    chatHistory takes part. In a group, a group's nudge at the end of the history (docs/groups.md)."""
    doc, preset, formats, arrangement = state.doc, state.preset, state.formats, state.arrangement
    if preset is None or formats is None:
        return
    for run in (arrangement.before, arrangement.after):
        if "DIALOGUE_SAMPLE" in map(_TAG, run):
            run[:] = example_items(
                run,
                separator=formats.new_example_chat,
                user=doc.user_name,
                char=doc.char_name,
                seed=state.seed,
                kept=doc.memo,
                members=_member_names(state),
            )
    plan = preset.memo.plans.get(doc.generation_type) or plan_of(preset, doc.generation_type)
    if plan.history_at is not None and plan.active[plan.history_at] and formats.new_chat:
        setting = "new_group_chat_prompt" if doc.group is not None else "new_chat_prompt"
        reuse = plan_reuse(preset, doc.generation_type)
        sources = (setting_source(setting),)
        arrangement.before.append(reuse.item(setting, "", "system", formats.new_chat, sources, squash=False))
    if doc.group is None:
        return
    without_node_text(arrangement)
    state.nudge, in_chat = group_nudge(formats.group_nudge, preset, plan, doc.generation_type)
    nudge = state.nudge
    if nudge is None:
        return
    if in_chat is not None:  # the node's copy in the chat
        source = nudge.parts[0].sources[0]
        copy = Injection(nudge.text, in_chat.depth, in_chat.order, in_chat.index, nudge.role, source)
        arrangement.injections.append(copy)
    arrangement.after.insert(0, nudge)  # the end of the history block (its budget counted first)


def _member_names(state: State) -> tuple[str, ...] | None:
    """A group's member names (sample dialogues are group turns), or None outside a group."""
    group = state.request.group
    if group is None or state.doc.group is None:
        return None
    return tuple(member.name for member in group.members)


def _card_overrides(
    card: Card | None, preset: CompiledPreset, plan: Plan
) -> tuple[tuple[Segment, ...], dict[int, tuple[Source, ...]]]:
    """The segments with the card's system prompt / post-history instructions in place (docs/cards.md)."""
    if card is None or not (card.system_prompt.strip() or card.post_history_instructions.strip()):
        return plan.segments, {}
    out = list(plan.segments)
    sources: dict[int, tuple[Source, ...]] = {}
    for k, index in enumerate(plan.render_at):
        node = preset.nodes[index].node
        override = node_override(node.identifier, node.content, card, forbidden=node.forbid_overrides)
        if override is not None:
            out[k] = Segment(key=node.identifier, template=override.template)
            sources[index] = (card_source(override.field), *plan.sources[index])
    return tuple(out), sources


def _preset_blocks(state: State) -> tuple[Mapping[str, tuple[Item, ...]], frozenset[str]]:
    """The native blocks a preset's walk places, with the scenario and the persona description, and
    their tags: made once per document, items and card (`doc.memo` keeps every one it made, so the
    ids of the items it lists as kept stay unique)."""
    doc, items, card = state.doc, state.items, state.card
    made = doc.memo.preset_blocks
    found = made.get((id(items), id(card)))
    if found is not None and found[0] is items and found[1] is card:
        return found[2], found[3]
    blocks = blocks_of(doc, items)
    scenario = _scenario_items(state)
    if scenario:
        blocks = {**blocks, SCENARIO_TAG: scenario}
    # end-user text: sent as written (docs/fidelity.md#the-deliberate-differences, item 2)
    if doc.user_persona.strip():
        persona = Part(doc.user_persona, (native_source(PERSONA_TAG),), False)
        blocks = {**blocks, PERSONA_TAG: (Item(PERSONA_TAG, "system", (persona,)),)}
    present = frozenset(blocks)
    made[(id(items), id(card))] = (items, card, blocks, present)
    doc.memo.kept.update(map(id, (*scenario, *blocks.get(PERSONA_TAG, ()))))
    return blocks, present


def _scenario_items(state: State) -> tuple[Item, ...]:
    """The scenario (the document's, else the card's) for the preset's scenario marker."""
    text = str(getattr(state.doc, "scenario", "") or "")
    source = native_source(SCENARIO_TAG)
    card = state.card
    if card is not None and (not text.strip() or text == card.scenario):
        text, source = card.scenario, card_source("scenario")  # filled in from the card
    if not text.strip():
        return ()
    return (Item(tag=SCENARIO_TAG, role="system", parts=(Part(text, (source,), True),)),)


def _report_unread_outlets(outlets: Mapping[str, str], preset: CompiledPreset, notes: Notes) -> None:
    if not outlets:
        return
    texts = "\n".join(cn.node.content.lower() for cn in preset.nodes if node_is_active(cn))
    for name in outlets:
        if f"outlet::{name.lower()}" not in texts:
            notes.warn(
                f"World Info outlet “{name}” has entries but no enabled preset node reads it with {{{{outlet::{name}}}}}."
            )
