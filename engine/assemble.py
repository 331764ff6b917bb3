"""The top-level `assemble`: a bucket document (and maybe a preset) in, the exact messages out.

Pure: no Django, no I/O, never writes anything. The order of work follows docs/assembly.md#order-of-work:
route, build native items, render the preset's macros, rearrange, squash, trim to the budget, inject, add the
terminal note, resolve identity macros in trusted text, shape for the provider, count tokens.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, NotRequired, TypedDict

from .authors_note import place_authors_note
from .buckets import BucketDocument, Budget, StmLine
from .cards import Card, DepthPrompt, card_env, fill_document, node_override, prepared_card
from .compiled import CompiledPreset
from .differences import differences
from .examples import example_items
from .formats import Formats, render_formats
from .generation import closing_items, with_send_if_empty, without_replaced_reply
from .groups import Group, group_document, group_nudge, without_node_text
from .injection import place_injections, tail_injections
from .macros import (
    MacroEnv,
    RenderOutput,
    Segment,
    render_segments,
    render_texts,
)
from .messages import count_tokens_of, squash, to_messages, trim_to_budget
from .native import (
    NAMES_DEFAULT,
    SAMPLE_HEADER,
    blocks_of,
    doc_reuse,
    history_run,
    macro_env,
    native_items,
    request_env,
)
from .parts import (
    Item,
    Message,
    MessageJson,
    Notes,
    Omission,
    OmissionJson,
    Part,
    Source,
    Transform,
    assembler_source,
    card_source,
    native_source,
    setting_source,
)
from .providers import shape
from .rearrange import (
    PERSONA_TAG,
    SCENARIO_TAG,
    Arrangement,
    Injection,
    Plan,
    native_arrangement,
    node_is_active,
    plan_of,
    plan_reuse,
    rearrange,
    render_memo,
)
from .regex import CompiledScript, RegexBudget, RegexRequest, apply_to_entries, apply_to_history, switched
from .reuse import Reuse
from .sampling import GenerationSettings, with_generation_settings
from .st_format import PromptSettings
from .tokens import (
    DEFAULT_ENCODING,
    ENCODINGS,
    TokenReport,
    TokenReportJson,
    count_text,
)
from .vocabulary import PROVIDERS, STYLES
from .worldinfo import CARD_DEPTH_INDEX, EntryRewrite, WorldInfoContribution, WorldInfoInput, contribute

_TAG = attrgetter("tag")
_ROLE = attrgetter("role")
AUTHORS_NOTE_POSITIONS = (2, 3)  # World Info's Author's Note top and bottom (docs/worldinfo.md#placement)
SAMPLE_NOTE = (
    "(The dialogues above are style examples for reference only; they are not the conversation to "
    "continue. Reply to the latest message of the real conversation.)"
)


@dataclass(frozen=True, slots=True)
class StoredStm:
    """Short-term memory computed from storage (it replaces the document's inline STM)."""

    lines: tuple[StmLine, ...]
    tail_directive: str | None = None


class BudgetJson(TypedDict):
    context: int
    reply: int


class AssemblyJson(TypedDict):
    """The assemble answer (docs/bot.md), as `Assembly.to_dict` writes it; the keys marked
    NotRequired are there only when the assembly has them."""

    mode: str
    preset: str | None
    style: str
    messages: list[MessageJson]
    warnings: list[str]
    omitted: list[OmissionJson]
    variables: dict[str, Any]
    global_variables: dict[str, Any]
    seed: int
    tokens: TokenReportJson
    budget: NotRequired[BudgetJson]
    provider: NotRequired[str]
    provider_payload: NotRequired[dict[str, Any] | None]
    generation_settings: NotRequired[dict[str, Any]]
    world_info: NotRequired[dict[str, Any]]
    sillytavern_differences: NotRequired[list[str]]


@dataclass(frozen=True, slots=True)
class Assembly:
    """Everything one assembly produced (docs/assembly.md#output-cli-api)."""

    mode: str  # "native" | "preset"
    preset_name: str | None
    style: str
    messages: tuple[Message, ...]
    warnings: tuple[str, ...]
    omitted: tuple[Omission, ...]
    variables: dict[str, Any]
    global_variables: dict[str, Any]
    seed: int
    tokens: TokenReport
    provider: str | None = None
    provider_payload: dict[str, Any] | None = None
    budget: Budget | None = None
    unknown_macros: tuple[str, ...] = ()
    generation: GenerationSettings | None = None  # the sampler parameters for the provider
    extra: dict[str, Any] = field(default_factory=dict)
    # when the server's World Info took part (docs/worldinfo.md#the-explanation)
    world_info: dict[str, Any] | None = None
    # where SillyTavern 1.18 would send otherwise, and why (docs/fidelity.md#the-deliberate-differences)
    differences: tuple[str, ...] = ()

    def to_dict(self) -> AssemblyJson:
        """The JSON shape shared by the CLI and the API."""
        out: AssemblyJson = {
            "mode": self.mode,
            "preset": self.preset_name,
            "style": self.style,
            "messages": [m.to_dict() for m in self.messages],
            "warnings": list(self.warnings),
            "omitted": [o.to_dict() for o in self.omitted],
            "variables": self.variables,
            "global_variables": self.global_variables,
            "seed": self.seed,
            "tokens": self.tokens.to_dict(),
        }
        if self.budget is not None:
            out["budget"] = {"context": self.budget.context, "reply": self.budget.reply}
        if self.provider is not None:
            out["provider"] = self.provider
            out["provider_payload"] = self.provider_payload
        if self.generation is not None:
            out["generation_settings"] = self.generation.to_dict()
        if self.world_info is not None:
            out["world_info"] = self.world_info
        if self.differences:
            out["sillytavern_differences"] = list(self.differences)
        return out


def assemble(
    doc: BucketDocument,
    *,
    preset: CompiledPreset | None = None,
    style: str | None = None,
    provider: str | None = None,
    encoding: str = DEFAULT_ENCODING,
    server_id: int = 0,
    stm: StoredStm | None = None,
    seed: int | None = None,
    count_tokens: bool = True,
    generation: GenerationSettings | None = None,
    card: Card | None = None,
    regex_scripts: Sequence[CompiledScript] | None = None,
    count_for: str | None = None,
    world_info: WorldInfoInput | None = None,
    group: Group | None = None,
) -> Assembly:
    """The messages the bot would send for `doc`, rearranged by `preset` when one is given.

    `regex_scripts` are the regex scripts in running order (the server's, then the preset's, as
    switched on for the server); None means the preset's own enabled scripts. Their promptOnly
    scripts rewrite history messages (docs/regex.md#where-they-run).

    `style` overrides the preset's injection style; `provider` adds that provider's request body;
    `stm` replaces the document's inline short-term memory; `seed` overrides the document's seed
    (when neither is given one is drawn and returned); `count_tokens=False` skips the counting (zeros,
    for timing the assembly alone); `generation` (engine.sampling) is returned as the assembly's
    generation settings, goes into the provider's request body when it is for that provider, and its
    sentences about values changed to fit join the warnings; `card` is the server's active character
    (docs/cards.md: it fills the document's empty fields and overrides main and jailbreak); `count_for` is
    the provider the token counts are for when no `provider` is asked for (the server's,
    docs/assembly.md#tokens); `group` is the group of the document's `group` turn (docs/groups.md), `card`
    then being the speaker's card. Raises ValueError for an unknown style, provider or encoding.
    """
    _check_choices(style, provider, encoding)
    if count_for is not None and count_for not in PROVIDERS:
        raise ValueError(f"Unknown provider {count_for!r}: use openai, anthropic or gemini.")
    if seed is None:
        seed = doc.seed if doc.seed is not None else secrets.randbelow(2**31)
    speaker = None
    if group is not None and doc.group is not None:  # the speaker's name and card (docs/groups.md)
        doc, speaker = group_document(doc, group, card)
        card = speaker.card
    if card is not None:
        card, rendered = prepared_card(
            card,
            env=MacroEnv(
                now=doc.now,
                timezone=doc.timezone,
                server_id=server_id,
                persona=doc.user_persona,
                **request_env(doc),
            ),
            seed=seed,
            variables=doc.variables,
            global_variables=doc.global_variables,
        )
        doc = fill_document(doc, card)
        if rendered is not None:  # the card's macros ran first: their writes are what the rest sees
            doc = replace(doc, variables=rendered.variables, global_variables=rendered.global_variables)
    inputs = _inputs(
        doc,
        preset=preset,
        stm=stm,
        seed=seed,
        server_id=server_id,
        encoding=encoding,
        regex_scripts=regex_scripts,
    )
    inputs.card = card
    inputs.group = group
    inputs.depth_prompts = speaker.depth_prompts if speaker is not None else ()
    if world_info is not None:
        _add_world_info(inputs, world_info)
    arranged = _arrange(inputs, style=style, provider=provider)
    return _finish(
        inputs,
        arranged,
        provider=provider,
        count_tokens=count_tokens,
        generation=generation,
        count_for=count_for,
    )


# -- inputs ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Inputs:
    """What one assembly starts from: the routed preset, the native items, the seed and the notes."""

    doc: BucketDocument
    preset: CompiledPreset | None
    items: tuple[Item, ...]
    seed: int
    server_id: int
    stm: StoredStm | None
    encoding: str
    notes: Notes
    card: Card | None = None
    group: Group | None = None
    depth_prompts: tuple[DepthPrompt, ...] = ()  # a join mode's members' (docs/groups.md)
    world_info: WorldInfoContribution | None = None
    regex_scripts: Sequence[CompiledScript] = ()
    names: int = NAMES_DEFAULT  # the preset's names_behavior: where speaker names go
    regex_budget: RegexBudget = field(default_factory=RegexBudget)
    rewritten: dict[int, str] = field(default_factory=dict)  # history texts the promptOnly scripts changed


def _check_choices(style: str | None, provider: str | None, encoding: str) -> None:
    if style is not None and style not in STYLES:
        raise ValueError(f"Unknown injection style {style!r}: use merge or standalone.")
    if provider is not None and provider not in PROVIDERS:
        raise ValueError(f"Unknown provider {provider!r}: use openai, anthropic or gemini.")
    if encoding not in ENCODINGS:
        raise ValueError(f"Unknown encoding {encoding!r}: use o200k_base or cl100k_base.")


def _inputs(
    doc: BucketDocument,
    *,
    preset: CompiledPreset | None,
    stm: StoredStm | None,
    seed: int | None,
    server_id: int,
    encoding: str,
    regex_scripts: Sequence[CompiledScript] | None = None,
) -> _Inputs:
    if seed is None:
        seed = doc.seed if doc.seed is not None else secrets.randbelow(2**31)
    notes = Notes()
    # before anything is scanned or placed (docs/assembly.md#generation-types-and-prefill)
    doc = without_replaced_reply(doc, notes)
    doc = with_send_if_empty(doc, preset.settings if preset is not None else None, notes)
    if regex_scripts is None:
        regex_scripts = switched(preset.regex_scripts, {}) if preset is not None else ()
    budget = RegexBudget()  # one regex budget for the whole assembly (history and World Info)
    rewritten = _history_scripts(doc, regex_scripts, seed, server_id, notes, budget)
    if preset is not None and doc.impersonation:
        notes.warn("Impersonation uses native assembly: presets are character-centric.")
        preset = None
    lines = stm.lines if stm is not None else None
    header = "" if preset is not None else SAMPLE_HEADER  # a preset sends SillyTavern's separators
    names = preset.settings.names_behavior if preset is not None else NAMES_DEFAULT
    items = native_items(doc, stm=lines, sample_header=header, rewritten=rewritten, names=names)
    return _Inputs(
        doc=doc,
        preset=preset,
        items=items,
        seed=seed,
        server_id=server_id,
        stm=stm,
        encoding=encoding,
        notes=notes,
        regex_scripts=tuple(regex_scripts),
        names=names,
        regex_budget=budget,
        rewritten={index: text for index, (text, _by) in rewritten.items()},
    )


def _history_scripts(
    doc: BucketDocument,
    scripts: Sequence[CompiledScript],
    seed: int,
    server_id: int,
    notes: Notes,
    budget: RegexBudget,
) -> dict[int, tuple[str, tuple[Transform, ...]]]:
    """History texts the promptOnly regex scripts changed, with the scripts that changed each."""
    if not scripts or not doc.history:
        return {}
    request = RegexRequest(
        seed=seed,
        user=doc.user_name,
        char=doc.char_name,
        env=MacroEnv(server_id=server_id),
        variables=doc.variables,
        global_variables=doc.global_variables,
        budget=budget,
    )
    result = apply_to_history(scripts, [(m.role, m.content) for m in doc.history], request)
    for failure in result.failures:
        if not failure.inactive:
            notes.warn(f"Regex script “{failure.script}” did not run on the history: {failure.error}")
    return {
        index: (result.texts[index], tuple(Transform(s.label, s.id) for s in changed))
        for index, changed in result.changed_by.items()
    }


def _entry_scripts(inputs: _Inputs) -> EntryRewrite | None:
    """The promptOnly World Info regex scripts (placement 5) as a rewrite of activated entries: their
    texts after the scripts, and the scripts that changed each."""
    if not inputs.regex_scripts:
        return None
    doc = inputs.doc
    request = RegexRequest(
        seed=inputs.seed,
        user=doc.user_name,
        char=doc.char_name,
        env=MacroEnv(server_id=inputs.server_id),
        variables=doc.variables,
        global_variables=doc.global_variables,
        budget=inputs.regex_budget,
    )

    def rewrite(
        entries: list[tuple[str, int | None]],
    ) -> tuple[list[str], dict[int, tuple[Transform, ...]]]:
        result = apply_to_entries(inputs.regex_scripts, entries, request)
        for failure in result.failures:
            if not failure.inactive:
                inputs.notes.warn(
                    f"Regex script “{failure.script}” did not run on World Info: {failure.error}"
                )
        changed = {
            index: tuple(Transform(s.label, s.id) for s in scripts)
            for index, scripts in result.changed_by.items()
        }
        return list(result.texts), changed

    return rewrite


def _add_world_info(inputs: _Inputs, world_info: WorldInfoInput) -> None:
    """Activate, render and place World Info before the preset's nodes are rendered
    (docs/worldinfo.md#placement)."""
    doc, encoding = inputs.doc, inputs.encoding
    preset = inputs.preset
    header = "" if preset is not None else SAMPLE_HEADER  # a preset sends SillyTavern's separators
    contribution = contribute(
        world_info,
        doc,
        inputs.items,
        env=macro_env(doc, inputs.items, server_id=inputs.server_id),
        seed=inputs.seed,
        count_tokens=lambda text: count_text(text, encoding),
        sample_header=header,
        rewrite_entries=_entry_scripts(inputs),
        rewritten_history=inputs.rewritten,
        card_texts=_card_scan_texts(inputs.card),
    )
    for warning in contribution.warnings:
        inputs.notes.warn(warning)
    if preset is None:
        for name in contribution.outlets:
            inputs.notes.warn(
                f"World Info outlet “{name}” has entries but native assembly has no {{{{outlet::…}}}} to read it."
            )
    inputs.items = contribution.items
    inputs.world_info = contribution


def _card_scan_texts(card: Card | None) -> dict[str, str]:
    """The card texts World Info's `match*` flags scan besides the document's (docs/worldinfo.md)."""
    if card is None:
        return {}
    depth = card.depth_prompt.prompt if card.depth_prompt is not None else ""
    return {"depth_prompt": depth, "creator_notes": card.creator_notes.replace("\r", "")}


# -- arrange --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Arranged:
    """The ordered items after rendering, rearranging, trimming and injecting."""

    items: list[Item]
    style: str
    variables: dict[str, Any]
    global_variables: dict[str, Any]
    unknown_macros: tuple[str, ...] = ()
    history: tuple[int, int] = (0, 0)  # where the history items are in `items`: [start, stop)
    injected: bool = False  # some depth injection was placed
    sample_note: bool = False  # the assembler's note after trailing sample dialogues was added
    nudge: Item | None = None  # a group's nudge, for the end of the history (docs/groups.md)


def _arrange(inputs: _Inputs, *, style: str | None, provider: str | None) -> _Arranged:
    doc, preset, notes = inputs.doc, inputs.preset, inputs.notes
    wi = inputs.world_info
    if preset is None:
        arrangement = native_arrangement(inputs.items)
        variables = wi.variables if wi is not None else doc.variables
        global_variables = wi.global_variables if wi is not None else doc.global_variables
        arranged = _Arranged([], style or "merge", dict(variables), dict(global_variables))
    else:
        arrangement, arranged = _arrange_preset(inputs, preset, style)

    if wi is not None:
        arrangement.injections.extend(wi.injections)
    place_authors_note(arrangement, doc, _authors_note_text(inputs, arranged), notes)
    # A continued message moves to the very end (docs/assembly.md#generation-types-and-prefill): out of the
    # history before injections land.
    continued = None
    if doc.generation_type == "continue" and arrangement.history and arrangement.history[-1].history:
        continued = arrangement.history.pop()
    stm = inputs.stm
    directives = [*doc.tail_directives, *([stm.tail_directive] if stm and stm.tail_directive else [])]
    arrangement.injections.extend(tail_injections(directives))
    depths = inputs.depth_prompts
    if not depths and inputs.card is not None and inputs.card.depth_prompt is not None:
        depths = (inputs.card.depth_prompt,)
    for depth in depths:
        # after the preset's own injections and World Info's Author's Note entries (SillyTavern's order)
        index = CARD_DEPTH_INDEX
        source = card_source("depth_prompt")
        arrangement.injections.append(Injection(depth.prompt, depth.depth, 100, index, depth.role, source))
    if not arrangement.chat:
        _drop_in_chat(arrangement, notes)
    if doc.budget is not None:
        trim_to_budget(arrangement, doc.budget, inputs.encoding, notes, doc=doc, seed=inputs.seed)
    arranged.injected = bool(arrangement.injections)
    if continued is not None:
        _count_continued(arrangement, arranged.style, preset)
    arrangement = place_injections(arrangement, arranged.style)
    # injected entries a World Info script changed (docs/regex.md#where-they-run)
    if wi is not None and wi.injected_changes:
        arrangement.history = wi.mark_injected(arrangement.history)
        arrangement.after = wi.mark_injected(arrangement.after)

    ordered = [*arrangement.before, *arrangement.history, *arrangement.after]
    arranged.history = (len(arrangement.before), len(arrangement.before) + len(arrangement.history))
    if ordered and ordered[-1].tag == "DIALOGUE_SAMPLE":
        arranged.sample_note = True
        noted = (assembler_source("sample_note"),)
        if preset is None:
            ordered.append(Item(tag="", role="user", parts=(Part(SAMPLE_NOTE, noted, False),)))
        else:  # the same item on every assembly with the preset (engine/reuse.py)
            reuse = plan_reuse(preset, doc.generation_type)
            ordered.append(reuse.item("sample_note", "", "user", SAMPLE_NOTE, noted, trusted=False))
    closing = closing_items(
        doc,
        preset.settings if preset is not None else PromptSettings(),
        continued=continued,
        provider=provider,
        env=macro_env(doc, inputs.items, server_id=inputs.server_id),
        seed=inputs.seed,
        variables=arranged.variables,
        global_variables=arranged.global_variables,
        notes=notes,
    )
    if closing.render is not None:
        arranged.variables, arranged.global_variables = (
            closing.render.variables,
            closing.render.global_variables,
        )
    arranged.items = closing.after(ordered)
    if preset is not None and preset.settings.squash_system_messages:
        arranged.items, arranged.history = squash(
            arranged.items, arranged.history, _reuse(inputs), plain_history=_plain_history(inputs, arranged)
        )
    return arranged


def _plain_history(inputs: _Inputs, arranged: _Arranged) -> bool:
    """Whether the arranged history is the document's own, with no system message (nothing for the
    squash to join there)."""
    start, stop = arranged.history
    run = history_run(inputs.doc, inputs.names)
    if stop - start != len(run.items) or not run.items:
        return False
    plain = inputs.doc.memo.get(("plain history", inputs.names))
    if plain is None:
        plain = inputs.doc.memo[("plain history", inputs.names)] = "system" not in map(_ROLE, run.items)
    return plain and tuple(arranged.items[start:stop]) == run.items


def _count_continued(arrangement: Arrangement, style: str, preset: CompiledPreset | None) -> None:
    """SillyTavern 1.18 places depth injections with the continued message still in the chat, then
    takes it out: each injection deeper than 0 lands one message nearer the end than it would in the
    chat without it (standalone placement, the continue nudge rather than a prefill)."""
    if style != "standalone" or preset is None or preset.settings.continue_prefill:
        return
    arrangement.injections[:] = [
        replace(injection, depth=injection.depth - 1) if injection.depth > 0 else injection
        for injection in arrangement.injections
    ]


def _drop_in_chat(arrangement: Arrangement, notes: Notes) -> None:
    """Without a chat (chatHistory disabled or absent) nothing lands inside it, as in SillyTavern 1.18:
    @depth nodes, World Info at a depth, the in-chat Author's Note, the card's depth prompt."""
    for injection in arrangement.injections:
        notes.omit(
            f"An in-chat {injection.role} message at depth {injection.depth}.",
            "The preset sends no chat (its chatHistory is disabled or absent), so nothing is placed in it.",
            injection.source,
        )
    arrangement.injections.clear()


def _arrange_preset(
    inputs: _Inputs, preset: CompiledPreset, style: str | None
) -> tuple[Arrangement, _Arranged]:
    """The preset's side of the arrangement: its nodes rendered, the blocks walked into its order."""
    doc, notes = inputs.doc, inputs.notes
    rendered, expanded, render, card_sources = _render_preset(inputs, preset)
    blocks, present = _preset_blocks(inputs)
    group = doc.group is not None
    kept: dict[tuple[frozenset[str], bool], Formats] = preset.memo.setdefault("formats", {})
    formats = kept.get((present, group))
    if formats is None:
        formats = render_formats(
            preset.settings,
            present,
            env=_preset_env(inputs),
            seed=inputs.seed,
            variables=render.variables,
            global_variables=render.global_variables,
            notes=notes,
            group=group,
        )
        if formats.render is None and len(kept) < 64:  # no macro ran: the same on every assembly
            kept[(present, group)] = formats
    if formats.render is not None:
        render = replace(
            render, variables=formats.render.variables, global_variables=formats.render.global_variables
        )
    arrangement = rearrange(
        blocks,
        preset,
        rendered,
        expanded,
        notes,
        card_sources,
        generation_type=doc.generation_type,
        formats=formats.blocks,
        reuse=doc_reuse(doc),
    )
    arranged = _Arranged(
        [],
        style or preset.injection_style or "merge",
        render.variables,
        render.global_variables,
        tuple(sorted(render.unknown_macros)),
    )
    _st_openers(arrangement, formats, inputs)
    if doc.group is not None:
        without_node_text(arrangement)
        plan = plan_of(preset, doc.generation_type)
        arranged.nudge, in_chat = group_nudge(formats.group_nudge, preset, plan, doc.generation_type)
        if in_chat is not None and arranged.nudge is not None:  # the node's copy in the chat
            nudge = arranged.nudge
            source = nudge.parts[0].sources[0]
            copy = Injection(nudge.text, in_chat.depth, in_chat.order, in_chat.index, nudge.role, source)
            arrangement.injections.append(copy)
        if arranged.nudge is not None:  # the end of the history block (its budget counted first)
            arrangement.after.insert(0, arranged.nudge)
    return arrangement, arranged


def _st_openers(arrangement: Arrangement, formats: Formats, inputs: _Inputs) -> None:
    """SillyTavern's openers (docs/assembly.md#what-sillytavern-118-corrected): each sample dialogue as its
    separator and named turns, and the new-chat prompt right before the history when the preset's chatHistory
    takes part."""
    doc, preset = inputs.doc, inputs.preset
    assert preset is not None
    for run in (arrangement.before, arrangement.after):
        if "DIALOGUE_SAMPLE" in map(_TAG, run):
            run[:] = example_items(
                run,
                separator=formats.new_example_chat,
                user=doc.user_name,
                char=doc.char_name,
                seed=inputs.seed,
                kept=doc.memo,
                members=_member_names(inputs),
            )
    plan = plan_of(preset, doc.generation_type)
    if plan.history_at is not None and plan.active[plan.history_at] and formats.new_chat:
        setting = "new_group_chat_prompt" if doc.group is not None else "new_chat_prompt"
        reuse = plan_reuse(preset, doc.generation_type)
        sources = (setting_source(setting),)
        arrangement.before.append(reuse.item(setting, "", "system", formats.new_chat, sources, squash=False))


def _member_names(inputs: _Inputs) -> tuple[str, ...] | None:
    """A group's member names (sample dialogues are group turns), or None outside a group."""
    if inputs.group is None or inputs.doc.group is None:
        return None
    return tuple(member.name for member in inputs.group.members)


def _render_preset(
    inputs: _Inputs, preset: CompiledPreset
) -> tuple[Mapping[int, str], frozenset[str], RenderOutput, dict[int, tuple[Source, ...]]]:
    """Render every active content node in node order (docs/macros.md#variables); texts keyed by node
    position, and the card's sources for the nodes whose text the card replaced."""
    doc, notes = inputs.doc, inputs.notes
    variables, global_variables = doc.variables, doc.global_variables
    wi = inputs.world_info
    if wi is not None:  # World Info rendered first: its writes and outlets are what the preset sees
        variables, global_variables = wi.variables, wi.global_variables
        _report_unread_outlets(wi.outlets, preset, notes)
    plan = plan_of(preset, doc.generation_type)
    positions = plan.render_at
    segments, card_sources = _card_overrides(inputs.card, preset, plan)
    if plan.plain is not None and not card_sources:  # nothing to render: the texts as they are
        outputs, texts = plan.plain
        return texts, frozenset(), RenderOutput(outputs, dict(variables), dict(global_variables)), {}
    render = render_segments(
        segments,
        env=_preset_env(inputs),
        seed=inputs.seed,
        variables=variables,
        global_variables=global_variables,
        memo=None if card_sources else render_memo(preset, doc.generation_type),
    )
    for warning in render.warnings:
        notes.warn(warning)
    if render.unknown_macros:
        names = ", ".join(sorted(render.unknown_macros))
        notes.warn(f"Unsupported macros were left as they are: {names}.")
    rendered = {i: out.text for i, out in zip(positions, render.segments, strict=True)}
    expanded = (
        frozenset().union(*(out.expanded for out in render.segments)) if render.segments else frozenset()
    )
    return rendered, expanded, render, card_sources


def _preset_env(inputs: _Inputs) -> MacroEnv:
    """What the preset's macros read: the native blocks, and World Info's outlets when it took part."""
    env = macro_env(inputs.doc, inputs.items, server_id=inputs.server_id)
    wi = inputs.world_info
    if wi is not None:
        env = replace(env, outlets=wi.outlets)
    return env if inputs.card is None else card_env(env, inputs.card)


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


def _preset_blocks(inputs: _Inputs) -> tuple[Mapping[str, tuple[Item, ...]], frozenset[str]]:
    """The native blocks a preset's walk places, with the scenario and the persona description, and
    their tags: made once per document, items and card (`doc.memo` keeps every one it made, so the
    ids of the items it lists as kept stay unique)."""
    doc, items, card = inputs.doc, inputs.items, inputs.card
    made: dict[tuple[int, int], Any] = doc.memo.setdefault("preset blocks", {})
    found = made.get((id(items), id(card)))
    if found is not None and found[0] is items and found[1] is card:
        return found[2], found[3]
    blocks = blocks_of(doc, items)
    scenario = _scenario_items(inputs)
    if scenario:
        blocks = {**blocks, SCENARIO_TAG: scenario}
    # end-user text: sent as written (docs/fidelity.md#the-deliberate-differences, item 2)
    if doc.user_persona.strip():
        persona = Part(doc.user_persona, (native_source(PERSONA_TAG),), False)
        blocks = {**blocks, PERSONA_TAG: (Item(PERSONA_TAG, "system", (persona,)),)}
    present = frozenset(blocks)
    made[(id(items), id(card))] = (items, card, blocks, present)
    doc.memo.setdefault("kept", set()).update(map(id, (*scenario, *blocks.get(PERSONA_TAG, ()))))
    return blocks, present


def _scenario_items(inputs: _Inputs) -> tuple[Item, ...]:
    """The scenario (the document's, else the card's) for the preset's scenario marker."""
    text = str(getattr(inputs.doc, "scenario", "") or "")
    source = native_source(SCENARIO_TAG)
    if inputs.card is not None and (not text.strip() or text == inputs.card.scenario):
        text, source = inputs.card.scenario, card_source("scenario")  # filled in from the card
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


def _reuse(inputs: _Inputs) -> tuple[Reuse, ...]:
    """Where this assembly finds what an earlier one made of the same items (engine/reuse.py)."""
    if inputs.preset is None:
        return (doc_reuse(inputs.doc),)
    return (plan_reuse(inputs.preset, inputs.doc.generation_type), doc_reuse(inputs.doc))


# -- finish ---------------------------------------------------------------------------------------------


def _finish(
    inputs: _Inputs,
    arranged: _Arranged,
    *,
    provider: str | None,
    count_tokens: bool,
    generation: GenerationSettings | None = None,
    count_for: str | None = None,
) -> Assembly:
    doc, notes, encoding = inputs.doc, inputs.notes, inputs.encoding
    blank: list[Item] = []
    messages = tuple(
        to_messages(arranged.items, doc, inputs.seed, arranged.history, inputs.names, blank, _reuse(inputs))
    )
    payload = (
        shape(provider, messages, user=doc.user_name, char=doc.char_name, memory_tool=_has_tools(doc))
        if provider
        else None
    )
    if generation is not None:
        for sentence in generation.adjusted:
            notes.warn(sentence)
        if payload is not None and generation.provider == provider:
            payload = with_generation_settings(provider, payload, generation)
    tokens = count_tokens_of(
        messages,
        payload,
        provider=provider or count_for,
        encoding=encoding,
        count_tokens=count_tokens,
        names=(doc.user_name, doc.char_name),
    )
    if count_tokens and doc.budget is not None and tokens.total > doc.budget.prompt:
        notes.warn(
            f"The prompt uses {tokens.total} tokens, over the budget of {doc.budget.prompt} "
            f"(context {doc.budget.context} minus reply {doc.budget.reply})."
        )
    return Assembly(
        mode="native" if inputs.preset is None else "preset",
        preset_name=None if inputs.preset is None else inputs.preset.name,
        style=arranged.style,
        messages=messages,
        warnings=tuple(notes.warnings),
        omitted=tuple(notes.omitted),
        variables=arranged.variables,
        global_variables=arranged.global_variables,
        seed=inputs.seed,
        tokens=tokens,
        provider=provider,
        provider_payload=payload,
        budget=doc.budget,
        unknown_macros=arranged.unknown_macros,
        generation=generation,
        world_info=inputs.world_info.explanation() if inputs.world_info is not None else None,
        differences=differences(
            doc,
            inputs.preset,
            messages,
            style=arranged.style,
            injected=arranged.injected,
            blank_dropped=any(item.text for item in blank),
            sample_note=arranged.sample_note,
            authors_note_entries=inputs.world_info is not None
            and any(
                a.entry.entry.position in AUTHORS_NOTE_POSITIONS
                for a in inputs.world_info.activation.activated
            ),
            world_info_notes=inputs.world_info.activation.sillytavern_differences
            if inputs.world_info is not None
            else (),
            card_book=inputs.world_info is not None
            and any(a.entry.is_character for a in inputs.world_info.activation.activated),
        ),
    )


def _has_tools(doc: BucketDocument) -> bool:
    """The bot's model can call tools, so the body declares the memory tool (docs/memory.md)."""
    return doc.stm_context is not None and doc.stm_context.has_tools


def _authors_note_text(inputs: _Inputs, arranged: _Arranged) -> str:
    """The document's Author's Note with its macros rendered (after the preset's, with their variables)."""
    text = inputs.doc.authors_note.text
    if "{{" not in text:  # identity macros are resolved with the rest of the message
        return text
    env = _preset_env(inputs) if inputs.preset is not None else macro_env(inputs.doc, inputs.items)
    render = render_texts(
        [("authors_note", text)],
        env=env,
        seed=inputs.seed,
        variables=arranged.variables,
        global_variables=arranged.global_variables,
    )
    return render.segments[0].text
