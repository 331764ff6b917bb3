"""Build, then rearrange (docs/assembly.md#order-of-work): the native items walked into a preset's node order.

`rearrange` takes the native items, the preset and the rendered node texts, and returns an
`Arrangement`: what comes before the history, the history, what the preset places after it, and
the depth injections still to place (docs/assembly.md#depth-injection, `injection.py`). Every block it drops
is recorded in `Notes` with its reason; nothing the server configured disappears silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, NamedTuple

from ..buckets import TAGS, DocumentMemo
from ..compiled import CompiledNode, CompiledPreset
from ..macros import CompiledText, RenderMemo, Segment, SegmentOutput, static_text
from ..macros.render import MAX_EVALUATIONS
from ..parts import (
    BLOCK_NAMES,
    Injection,
    Item,
    Notes,
    Omission,
    Part,
    Source,
    native_source,
    node_source,
    setting_source,
)
from ..st_format import PresetNode, PromptSettings
from .reuse import Reuse

DEPTH_BLOCK_TAG = ""
WORLD_INFO = ("worldInfoBefore", "worldInfoAfter")
SYSTEM_SLOTS = ("main", "nsfw", "jailbreak", "enhanceDefinitions")
SILENT_MARKERS = ("nsfw", "jailbreak", "enhanceDefinitions")
SCENARIO_TAG = (
    "SYSTEM_SCENARIO"  # its marker places it, or (no marker) the end of the order: never a leftover
)
PERSONA_TAG = "USER_PERSONA"  # the document's user_persona; placed like the scenario
MARKER_TAG = {
    "scenario": SCENARIO_TAG,
    "personaDescription": PERSONA_TAG,
    "charDescription": "SYSTEM_PERSONA_PROMPT",
    "charPersonality": "SYSTEM_PERSONALITY",
    "dialogueExamples": "DIALOGUE_SAMPLE",
    "worldInfoBefore": "KNOWLEDGE_WORLD_INFO_BEFORE",
    "worldInfoAfter": "KNOWLEDGE_WORLD_INFO_AFTER",
}
# SillyTavern 1.18 sends these markers' blocks in the role the preset gives the marker (World Info
# too); the server-only blocks and the sample dialogues keep theirs.
ROLE_FROM_MARKER = frozenset({"charDescription", "charPersonality", "scenario", "personaDescription"})
DOCUMENTS = "KNOWLEDGE_SERVER_DOCUMENTS"  # the first enabled World Info marker takes them
WORLD_INFO_TAGS = ("KNOWLEDGE_WORLD_INFO_BEFORE", "KNOWLEDGE_WORLD_INFO_AFTER")
KNOWN_MARKERS = frozenset({*MARKER_TAG, *SILENT_MARKERS, "main", "chatHistory"})
ANCHORS = ("main", "charDescription", "charPersonality")
ANCHORED_BLOCKS = (
    "KNOWLEDGE_SERVER_INFO",
    "KNOWLEDGE_SERVER_MEMORIES",
    "KNOWLEDGE_SERVER_EMOJIS",
    "KNOWLEDGE_SERVER_STICKERS",
)
PRE_HISTORY_BLOCKS = (
    "KNOWLEDGE_USERS_IN_CONVERSATION",
    "KNOWLEDGE_SHORT_TERM_MEMORY",
    "KNOWLEDGE_SERVER_DOCUMENTS",  # only the documents no worldInfo marker takes
    "KNOWLEDGE_SERVER_CONDITIONING",
)
# A content macro a node expanded with non-empty text -> the native block it duplicates. Only our own
# summary: SillyTavern 1.18 sends a card's description, personality and examples at their markers even
# when a node also brings them in through {{description}} / {{personality}} / {{mesExamples}}
# (docs/assembly.md#what-sillytavern-118-corrected).
DEDUP_BLOCKS = {
    "summary": "KNOWLEDGE_SHORT_TERM_MEMORY",
}
# The blocks SillyTavern 1.18 appends after every node when the preset's order has no marker for them,
# in the order it appends them (its list of system prompts, then the persona description).
APPENDED_WHEN_ABSENT = (
    ("worldInfoBefore", "KNOWLEDGE_WORLD_INFO_BEFORE"),
    ("worldInfoAfter", "KNOWLEDGE_WORLD_INFO_AFTER"),
    ("charDescription", "SYSTEM_PERSONA_PROMPT"),
    ("charPersonality", "SYSTEM_PERSONALITY"),
    ("scenario", SCENARIO_TAG),
    ("personaDescription", PERSONA_TAG),
)


MAIN_SLOT_TAG = "MAIN_SLOT"  # see main_slot
_TAG = attrgetter("tag")


@dataclass(slots=True)
class Arrangement:
    """The assembled items in three runs around the history, plus the injections to place."""

    before: list[Item] = field(default_factory=list)
    # a kept walk's history is its tuple, shared: a step that changes the history replaces it
    history: list[Item] | tuple[Item, ...] = field(default_factory=list)
    after: list[Item] = field(default_factory=list)
    injections: list[Injection] = field(default_factory=list)
    # False when the preset's chatHistory is disabled or absent: SillyTavern 1.18 then sends no chat,
    # and nothing meant to land inside it (docs/assembly.md#what-sillytavern-118-corrected).
    chat: bool = True
    # the kept walk's snapshot this arrangement is a copy of (engine/assemble/kept_tail.py), else None
    kept: object = None


def main_slot(sources: tuple[Source, ...]) -> Item:
    """Where a `main` node that rendered empty, or is switched off, stands: SillyTavern 1.18 keeps the
    place of any `main` in the order (PromptManager.js getPromptCollection gives a switched-off one empty
    text), and the Author's Note set beside the main prompt goes there (engine.assemble.authors_note); never sent."""
    return Item(tag=MAIN_SLOT_TAG, role="system", parts=(Part("", sources, True),))


def without_main_slot(arrangement: Arrangement) -> None:
    """The arrangement without the empty main prompt's place (once the Author's Note has used it)."""
    for run in (arrangement.before, arrangement.after):
        if MAIN_SLOT_TAG in map(_TAG, run):  # the scan runs in C (most arrangements have none)
            tags = list(map(_TAG, run))
            for _ in range(tags.count(MAIN_SLOT_TAG)):  # found and taken out in C too
                at = tags.index(MAIN_SLOT_TAG)
                del tags[at], run[at]


def native_arrangement(items: tuple[Item, ...]) -> Arrangement:
    """Native assembly: every block in the fixed order, then the history."""
    return Arrangement(
        before=[item for item in items if not item.history], history=[item for item in items if item.history]
    )


def node_is_active(
    node: CompiledNode, notes: Notes | None = None, *, generation_type: str = "normal"
) -> bool:
    """True for an enabled node that takes part in this generation type (its trigger allows it,
    docs/assembly.md#generation-types-and-prefill)."""
    n = node.node
    if not n.enabled:
        return False
    if n.injection_trigger and generation_type not in n.injection_trigger:
        if notes is not None:
            triggers = ", ".join(n.injection_trigger)
            notes.omit(
                f"Node “{n.name or n.identifier}”.",
                f"It only runs for these generation types: {triggers}; this is a {generation_type} generation.",
                node_source(n.identifier, n.name),
            )
        return False
    return True


def rearrange(
    native: Mapping[str, Sequence[Item]],
    preset: CompiledPreset,
    rendered: Mapping[int, str],
    expanded: frozenset[str],
    notes: Notes,
    sources: Mapping[int, tuple[Source, ...]] | None = None,
    *,
    generation_type: str = "normal",
    formats: Mapping[str, str] | None = None,
    reuse: Reuse | None = None,
) -> Arrangement:
    """Walk the preset's enabled nodes in order, pulling native blocks at their markers
    (docs/assembly.md#order-of-work).

    `native` holds the native items grouped by tag (`native.blocks_of`; it is not changed);
    `rendered` maps a node's position to its rendered text (identity macros still deferred);
    `expanded` lists the content macros some enabled node expanded with non-empty text; `sources`
    names other sources for some nodes' text (a character card's override, docs/cards.md); nodes whose
    trigger lacks `generation_type` are skipped (docs/assembly.md#generation-types-and-prefill); `formats`
    holds the whole rendered text of a block whose format setting needed the macro engine
    (engine.assemble.formats), by block tag; `reuse` is the document's (engine/assemble/reuse.py), where the blocks in
    the preset's formats are kept.
    """
    walk = _Walk(native, preset, rendered, expanded, notes, sources or {}, generation_type, formats or {})
    if reuse is not None:
        walk.doc_reuse = reuse
    return walk.run()


def kept_walk(
    kept: DocumentMemo,
    native: Mapping[str, Sequence[Item]],
    preset: CompiledPreset,
    rendered: Mapping[int, str],
    expanded: frozenset[str],
    notes: Notes,
    *,
    generation_type: str,
    formats: Mapping[str, str],
    reuse: Reuse,
) -> Arrangement:
    """`rearrange` without a card's sources, done once per document for equal inputs: the same blocks
    and formats (the same objects: a document's blocks, a preset's kept formats) and rendered texts equal
    to the last assembly's walk to the same arrangement, notes included
    (docs/assembly.md#speed-this-2-core-machine). `kept` is the document's memo. The arrangement is kept
    the second time the same blocks and formats come (a document assembled once never pays for keeping
    it); each assembly gets its own copies of the lists, since later steps change them. When only some
    nodes' texts changed, and none of them went from empty to not or back, the kept arrangement gets
    those nodes' new items in their places (`_patched`): nothing else the walk does reads a node's text."""
    plan = preset.memo.plans.get(generation_type) or plan_of(preset, generation_type)  # kept: no call
    key = id(plan)
    found = kept.walks.get(key)
    same_blocks = (
        found is not None
        and found[0] is plan
        and found[1] is native
        and found[3] is formats
        and found[5] is reuse
        and found[4] == expanded
    )
    if not same_blocks:
        kept.walks[key] = (plan, native, rendered, formats, expanded, reuse, None)
        return rearrange(
            native,
            preset,
            rendered,
            expanded,
            notes,
            generation_type=generation_type,
            formats=formats,
            reuse=reuse,
        )
    assert found is not None
    snapshot = found[6]
    if snapshot is not None and not (found[2] is rendered or found[2] == rendered):
        snapshot = _patched(snapshot, plan, found[2], rendered, plan_reuse(preset, generation_type))
    if snapshot is None:
        own = Notes()
        walk = _Walk(native, preset, rendered, expanded, own, {}, generation_type, formats)
        walk.doc_reuse = reuse
        out = walk.run()
        snapshot = _Snapshot(
            tuple(out.before),
            tuple(out.history),
            tuple(out.after),
            tuple(out.injections),
            out.chat,
            tuple(own.warnings),
            tuple(own.omitted),
            walk.placed,
        )
    kept.walks[key] = (*found[:2], rendered, *found[3:6], snapshot)
    for sentence in snapshot.warnings:
        notes.warn(sentence)
    notes.omitted.extend(snapshot.omitted)
    return Arrangement(
        list(snapshot.before),
        snapshot.history,  # the long run, not copied (`Arrangement.history`)
        list(snapshot.after),
        list(snapshot.injections),
        snapshot.chat,
        snapshot,
    )


class _Snapshot(NamedTuple):
    """A walk's arrangement and notes, with where each node's item or injection went (`_Walk.placed`)."""

    before: tuple[Item, ...]
    history: tuple[Item, ...]
    after: tuple[Item, ...]
    injections: tuple[Injection, ...]
    chat: bool
    warnings: tuple[str, ...]
    omitted: tuple[Omission, ...]
    placed: dict[int, tuple[int, int]]


_BEFORE, _AFTER, _INJECTIONS = 0, 1, 2  # the run a node's item or injection went into (`_Walk.placed`)


def _patched(
    snapshot: _Snapshot, plan: Plan, was: Mapping[int, str], now: Mapping[int, str], reuse: Reuse
) -> _Snapshot | None:
    """`snapshot` (walked with the texts `was`) as the walk would make it with the texts `now`, or None
    when a node's text changed between empty and not (its item then comes or goes)."""
    if now.keys() != was.keys():  # the same plan renders the same nodes: never, but then walk anew
        return None
    runs: list[list[Any]] | None = None
    for index, text in now.items():
        old = was.get(index, "")
        if text == old:
            continue
        step = plan.text_steps.get(index)
        if step is None:
            return None
        kind, node = step
        sent = bool(text) or (kind is _CONTENT and node.role != "system")
        if sent != (bool(old) or (kind is _CONTENT and node.role != "system")):
            return None
        if not sent:
            continue
        if runs is None:
            runs = [list(snapshot.before), list(snapshot.after), list(snapshot.injections)]
        run, at = snapshot.placed[index]
        if kind is _CONTENT:
            runs[run][at] = _content_item(plan, reuse, index, node, text)
        else:
            runs[run][at] = _injection(plan, index, node, text)
    if runs is None:
        return snapshot
    return snapshot._replace(before=tuple(runs[0]), after=tuple(runs[1]), injections=tuple(runs[2]))


def _content_item(plan: Plan, reuse: Reuse, index: int, node: PresetNode, text: str) -> Item:
    """The item the walk sends for a content node with this text (a preset's fixed one when it is)."""
    item = plan.items.get(index)
    if item is None or item.parts[0].text is not text:
        item = reuse.item(index, DEPTH_BLOCK_TAG, node.role, text, plan.sources[index])
    return item


def _injection(plan: Plan, index: int, node: PresetNode, text: str) -> Injection:
    depth = max(0, node.injection_depth)
    return Injection(text, depth, node.injection_order, index, node.role, plan.sources[index][0])


@dataclass(frozen=True, slots=True)
class Plan:
    """What a preset's node list decides on its own (no document needed), worked out once per preset."""

    active: tuple[bool, ...]  # node_is_active, per node
    omissions: tuple[Omission, ...]  # enabled nodes that never run for this generation type
    history_at: int | None
    main_on: bool
    anchor_at: int | None
    pre_at: int | None
    wi_at: int | None
    claimed_after: frozenset[str]
    # blocks whose marker the order lacks: sent after every node
    # (docs/assembly.md#what-sillytavern-118-corrected)
    appended: tuple[str, ...]
    render_at: tuple[int, ...]  # the active content nodes with a template, in order
    segments: tuple[Segment, ...]  # their templates, keyed by identifier
    sources: tuple[tuple[Source], ...]  # per node: its source, as a part's sources
    # When no segment holds a macro or a compile warning, rendering gives the templates back: the
    # outputs and the texts by node position, made once here (None otherwise).
    plain: tuple[tuple[SegmentOutput, ...], Mapping[int, str]] | None = None
    # The item of each content node whose text every render gives alike (no macro, or identity macros
    # only), made once: the walk sends these very objects, so later steps can know them again.
    items: Mapping[int, Item] = field(default_factory=dict)
    steps: tuple[tuple[str, int, Any], ...] = ()  # what the walk does, in order (`_steps`)
    # the steps that read a node's text, by node position: (_CONTENT or _INJECT, the node)
    text_steps: Mapping[int, tuple[str, PresetNode]] = field(default_factory=dict)
    disabled_markers: tuple[tuple[str, tuple[str, ...]], ...] = ()  # with the blocks each takes out
    has_examples_marker: bool = False  # the order has a dialogueExamples node, enabled or not


def plan_of(preset: CompiledPreset, generation_type: str = "normal") -> Plan:
    """The preset's `Plan` for a generation type (docs/assembly.md#generation-types-and-prefill), kept in
    `preset.memo`."""
    plans = preset.memo.plans
    plan: Plan | None = plans.get(generation_type)
    if plan is None:
        plan = plans[generation_type] = _plan(preset.nodes, preset.settings, generation_type)
    return plan


def render_memo(preset: CompiledPreset, generation_type: str = "normal") -> RenderMemo:
    """The memo of the preset's renders for a generation type (macros/memo.py), kept in `preset.memo`."""
    renders = preset.memo.renders
    memo = renders.get(generation_type)
    if memo is None:
        memo = renders[generation_type] = RenderMemo()
    return memo


def plan_reuse(preset: CompiledPreset, generation_type: str = "normal") -> Reuse:
    """What the preset's assemblies for a generation type make again from its own items (reuse.py),
    kept in `preset.memo` beside the plan."""
    reuses = preset.memo.reuses
    reuse: Reuse | None = reuses.get(generation_type)
    if reuse is None:
        items = plan_of(preset, generation_type).items
        reuse = reuses[generation_type] = Reuse(own={id(item): item for item in items.values()})
    return reuse


def _plan(nodes: tuple[CompiledNode, ...], settings: PromptSettings, generation_type: str) -> Plan:
    notes = Notes()
    active = [node_is_active(node, notes, generation_type=generation_type) for node in nodes]
    ids = [cn.node.identifier for cn in nodes]
    active_ids = [i for i in range(len(ids)) if active[i]]
    history_at = ids.index("chatHistory") if "chatHistory" in ids else None
    limit = len(ids) if history_at is None else history_at
    appended = (
        ()
        if history_at is None or settings.converted
        else tuple(tag for identifier, tag in APPENDED_WHEN_ABSENT if identifier not in ids)
    )
    render_at = tuple(
        i for i in active_ids if nodes[i].node.kind == "content" and nodes[i].template is not None
    )
    segments = tuple(
        _segment(ids[i], template) for i in render_at if (template := nodes[i].template) is not None
    )
    plain = None
    texts = [_fixed_text(segment) for segment in segments]
    sources = tuple((node_source(cn.node.identifier, cn.node.name),) for cn in nodes)
    items = {
        i: Item(DEPTH_BLOCK_TAG, nodes[i].node.role, (Part(text, sources[i], True),))
        for i, text in zip(render_at, texts, strict=True)
        if text is not None and nodes[i].node.injection_position != 1
    }
    fixed = [text for text in texts if text is not None]
    if len(fixed) == len(texts) and sum(s.identities for s in segments) <= MAX_EVALUATIONS:
        plain = (
            tuple(SegmentOutput(segment.key, text) for segment, text in zip(segments, fixed, strict=True)),
            dict(zip(render_at, fixed, strict=True)),
        )
    anchor_at = max((i for i in active_ids if i < limit and ids[i] in ANCHORS), default=None)
    # The first enabled dialogueExamples, when it comes before chatHistory; at chatHistory the
    # leftovers (all in native order) include these blocks anyway.
    pre_at = next((i for i in active_ids if i < limit and ids[i] == "dialogueExamples"), None)
    wi_at = next((i for i in active_ids if ids[i] in WORLD_INFO), None)
    steps = _steps(nodes, active, pre_at=pre_at, wi_at=wi_at, anchor_at=anchor_at)
    return Plan(
        active=tuple(active),
        omissions=tuple(notes.omitted),
        history_at=history_at,
        main_on=any(ids[i] == "main" for i in active_ids),
        anchor_at=anchor_at,
        pre_at=pre_at,
        wi_at=wi_at,
        claimed_after=frozenset(_claimed_after(nodes, active, history_at)).union(appended),
        appended=appended,
        render_at=render_at,
        segments=segments,
        sources=sources,
        plain=plain,
        items=items,
        steps=steps,
        text_steps={index: (step, node) for step, index, node in steps if step in (_CONTENT, _INJECT)},
        disabled_markers=_disabled_markers(nodes, active),
        has_examples_marker="dialogueExamples" in ids,
    )


class _Walk:
    """One pass over the preset's nodes; `current` is the run (before or after the history) being filled."""

    def __init__(
        self,
        native: Mapping[str, Sequence[Item]],
        preset: CompiledPreset,
        rendered: Mapping[int, str],
        expanded: frozenset[str],
        notes: Notes,
        sources: Mapping[int, tuple[Source, ...]],
        generation_type: str,
        formats: Mapping[str, str],
    ) -> None:
        self.nodes = preset.nodes
        self.formats = formats
        self.sources = sources
        self.settings = preset.settings
        self.rendered = rendered
        self.notes = notes
        plan = self.plan = plan_of(preset, generation_type)
        self.reuse = plan_reuse(preset, generation_type)
        self.doc_reuse: Reuse | None = None  # the document's, when the caller has one (`rearrange`)
        self.active = plan.active
        notes.omitted.extend(plan.omissions)
        self.buckets: dict[str, Sequence[Item]] = dict(native)
        dropped = _drop_duplicates_and_disabled(
            self.buckets,
            plan.disabled_markers,
            plan.has_examples_marker,
            expanded,
            notes,
            converted=preset.settings.converted,
        )
        # The blocks still to place: each leaves when it is placed (a block is placed once).
        self.pending = {tag: items for tag, items in self.buckets.items() if items and tag not in dropped}
        self.history_at, self.main_on, self.anchor_at = plan.history_at, plan.main_on, plan.anchor_at
        self.pre_at, self.wi_at, self.claimed_after = plan.pre_at, plan.wi_at, plan.claimed_after

        self.out = Arrangement()
        self.current = self.out.before
        self.placed: dict[int, tuple[int, int]] = {}  # where each node's item or injection went

    def run(self) -> Arrangement:
        if not self.main_on:
            # The server's prompt is never dropped: without an enabled `main` it opens the prompt.
            self.take("SYSTEM_HUMANIZER_RULES")
            self.take("SYSTEM_CHANNEL_PROMPT")
        self.walk()
        if self.history_at is None:
            # No chatHistory in the preset: everything not placed yet goes last, and no chat at all.
            for tag in TAGS[:-1]:
                self.take(tag)
            self.no_chat("The preset has no chatHistory marker")
        for tag in self.plan.appended:  # SillyTavern 1.18 appends these after every node of the order
            self.out.after.extend(self.block(tag))
        if SCENARIO_TAG in self.pending:
            self.notes.omit(
                "The scenario.",
                "The preset has no enabled scenario marker.",
                self.pending[SCENARIO_TAG][0].parts[0].sources[0],
            )
        if PERSONA_TAG in self.pending:
            self.notes.omit(
                "The user's persona description.",
                "The preset has no enabled personaDescription marker.",
                native_source(PERSONA_TAG),
            )
        return self.out

    def walk(self) -> None:
        """The plan's steps in order (`_steps`): blocks taken, nodes' texts sent, markers, the history."""
        pending, rendered, plan = self.pending, self.rendered, self.plan
        for step, index, arg in plan.steps:
            if step is _TAKE:
                if arg in pending:
                    self.take(arg)
            elif step is _CONTENT:
                # Whitespace counts where SillyTavern squashes it in; an empty user or assistant prompt
                # is never sent (docs/fidelity.md#the-deliberate-differences, item 4) but, as in
                # SillyTavern, it ends a run of system messages to squash.
                text = rendered.get(index, "")
                node: PresetNode = arg
                if text or node.role != "system":
                    item = plan.items.get(index)
                    if item is None or item.parts[0].text is not text or index in self.sources:
                        sources = self.sources.get(index) or plan.sources[index]
                        item = self.reuse.item(index, DEPTH_BLOCK_TAG, node.role, text, sources)
                    self.placed[index] = (
                        _AFTER if self.current is self.out.after else _BEFORE,
                        len(self.current),
                    )
                    self.current.append(item)
                elif node.identifier == "main":
                    self.current.append(main_slot(plan.sources[index]))
            elif step is _MAIN_SLOT:
                self.current.append(main_slot(plan.sources[index]))
            elif step is _MARKER:
                self.marker(arg)
            elif step is _INJECT:
                self.injection(index, arg, rendered.get(index, ""))
            else:
                self.chat_history(index)

    def chat_history(self, index: int) -> None:
        """The leftovers not claimed after the history, then the history; later nodes go after it."""
        pending, claimed = self.pending, self.claimed_after
        for tag in TAGS[:-1]:
            if tag in pending and tag not in claimed:
                self.take(tag)
        if self.active[index]:
            self.out.history = list(self.buckets.get("DIALOGUE_HISTORY", []))
        else:
            self.no_chat("The preset disables chatHistory")
        self.current = self.out.after

    def no_chat(self, cause: str) -> None:
        """As SillyTavern 1.18: a preset without an enabled chatHistory sends no conversation at all."""
        self.out.chat = False
        self.notes.warn(
            f"{cause}: as in SillyTavern 1.18, the conversation is not sent with this preset "
            "(switch its Chat History node on to send it)."
        )
        history = self.buckets.get("DIALOGUE_HISTORY", ())
        if history:
            count = len(history)
            self.notes.omit(
                f"The conversation ({count} message{'s' if count != 1 else ''}).",
                f"{cause}.",
                native_source("DIALOGUE_HISTORY"),
            )

    def injection(self, index: int, node: PresetNode, text: str) -> None:
        if text:
            self.placed[index] = (_INJECTIONS, len(self.out.injections))
            self.out.injections.append(_injection(self.plan, index, node, text))

    def marker(self, node: PresetNode) -> None:
        tag = MARKER_TAG.get(node.identifier)
        if tag is not None and node.identifier in WORLD_INFO:
            first = self.nodes[self.wi_at].node is node  # type: ignore[index]
            if tag not in self.pending and not (first and DOCUMENTS in self.pending):
                return  # nothing to place
            # World Info text first, then (at the first enabled World Info marker) the documents
            items = self.in_role(self.block(tag), node)
            if first:
                items += self.block(DOCUMENTS)
            self.current.extend(_wrap(items, node.prefix, node.suffix, items[0].tag if items else tag))
        elif tag is not None and node.identifier in ROLE_FROM_MARKER:
            items = self.in_role(self.block(tag), node)
            if items:
                self.current.extend(_wrap(items, node.prefix, node.suffix, tag))
        elif tag is not None:
            self.take(tag, node.prefix, node.suffix)
        elif node.identifier not in KNOWN_MARKERS:
            self.notes.warn(f"Unrecognised marker “{node.identifier}” was skipped at assembly.")

    def in_role(self, items: list[Item], node: PresetNode) -> list[Item]:
        """`_in_role`, made once per document for the same block and role (engine/assemble/reuse.py)."""
        if node.role not in ("user", "assistant") or not items or self.doc_reuse is None:
            return _in_role(items, node)
        key = ("role", items[0].tag, node.role)
        return list(self.doc_reuse.wrapped(key, items, lambda: _in_role(items, node)))

    def take(self, tag: str, prefix: str = "", suffix: str = "") -> None:
        """Place a native block (once) in the current run, with its format and marker text."""
        items = self.block(tag)
        if items:
            self.current.extend(_wrap(items, prefix, suffix, tag) if prefix or suffix else items)

    def block(self, tag: str) -> list[Item]:
        """A native block's items with its format (once; [] when placed or dropped already)."""
        items = self.pending.pop(tag, None)
        if items is None:
            return []
        if tag in self.formats:  # the format's whole rendered text replaces the block
            text = self.formats[tag]
            if not text.strip():
                return []
            if self.doc_reuse is None:
                return _formatted(items[0], tag, text)
            # the same item while the format renders the same text for the document's block
            first = items[0]
            return list(
                self.doc_reuse.wrapped(
                    ("formatted", tag), items, lambda: _formatted(first, tag, text), value=text
                )
            )
        wrapping = _FORMATTED.get(tag)
        if wrapping is None:
            return list(items)
        setting, placeholder = wrapping
        template = getattr(self.settings, setting)
        if template == placeholder or placeholder not in template:
            return list(items)
        if self.doc_reuse is None:
            return list(_wrap_format(list(items), template, placeholder, tag))
        # the document's items in the preset's format: the same for every assembly of the document
        made = self.doc_reuse.wrapped(
            ("format", tag, template),
            items,
            lambda: list(_wrap_format(list(items), template, placeholder, tag)),
        )
        return list(made)


# The blocks a preset's format setting wraps: the setting and the placeholder the block goes into.
_FORMATTED = {
    "SYSTEM_PERSONALITY": ("personality_format", "{{personality}}"),
    SCENARIO_TAG: ("scenario_format", "{{scenario}}"),
    **{tag: ("wi_format", "{0}") for tag in (DOCUMENTS, *WORLD_INFO_TAGS)},
}


def _formatted(item: Item, tag: str, text: str) -> list[Item]:
    """The block's first item holding its format's whole rendered text instead of its own parts."""
    setting = "personality_format" if tag == "SYSTEM_PERSONALITY" else "scenario_format"
    part = Part(text, (*item.parts[0].sources[:1], setting_source(setting)), True)
    return [item.with_parts((part,))]


def _in_role(items: list[Item], node: PresetNode) -> list[Item]:
    """The block sent in the marker's own role (a preset may set user or assistant on a marker)."""
    if node.role not in ("user", "assistant"):
        return items
    return [replace(item, role=node.role) for item in items]


_TAKE, _CONTENT, _MARKER, _INJECT, _HISTORY = "take", "content", "marker", "inject", "history"
_MAIN_SLOT = "main slot"


def _steps(
    nodes: tuple[CompiledNode, ...],
    active: Sequence[bool],
    *,
    pre_at: int | None,
    wi_at: int | None,
    anchor_at: int | None,
) -> tuple[tuple[str, int, Any], ...]:
    """What the walk does at each node, in order, decided once: the blocks taken before the sample
    dialogues, the server's prompt with `main`, a marker's block, a node's text or injection, the
    chat history, the server's knowledge after the anchor. Inactive nodes and comments do nothing."""
    steps: list[tuple[str, int, Any]] = []
    for index, compiled in enumerate(nodes):
        node = compiled.node
        if index == pre_at:
            steps += [(_TAKE, index, tag) for tag in PRE_HISTORY_BLOCKS if tag != DOCUMENTS or wi_at is None]
        if node.identifier == "chatHistory":
            steps.append((_HISTORY, index, None))
            continue
        if not active[index] or node.kind == "comment":
            if node.identifier == "main":  # SillyTavern keeps a switched-off main's place (main_slot)
                steps.append((_MAIN_SLOT, index, None))
            continue
        if node.kind == "content" and node.injection_position == 1:
            steps.append((_INJECT, index, node))
            continue
        if node.identifier == "main":
            steps += [(_TAKE, index, "SYSTEM_HUMANIZER_RULES"), (_TAKE, index, "SYSTEM_CHANNEL_PROMPT")]
        elif node.kind == "marker":
            steps.append((_MARKER, index, node))
        if node.kind == "content":
            steps.append((_CONTENT, index, node))
        if index == anchor_at:
            steps += [(_TAKE, index, tag) for tag in ANCHORED_BLOCKS]
    return tuple(steps)


def _disabled_markers(
    nodes: tuple[CompiledNode, ...], active: list[bool]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The preset's disabled markers with the blocks each takes out (worked out once, in the plan)."""
    documents_placed = any(active[i] for i, cn in enumerate(nodes) if cn.node.identifier in WORLD_INFO)
    out = []
    for compiled in nodes:
        node = compiled.node
        if node.kind != "marker" or node.enabled or node.identifier not in MARKER_TAG:
            continue
        tags: tuple[str, ...] = (MARKER_TAG[node.identifier],)
        if node.identifier in WORLD_INFO and not documents_placed:
            tags = (DOCUMENTS, *tags)  # every World Info marker is off: the documents go with them
        out.append((node.identifier, tags))
    return tuple(out)


def _drop_duplicates_and_disabled(
    buckets: dict[str, Sequence[Item]],
    disabled_markers: tuple[tuple[str, tuple[str, ...]], ...],
    has_examples_marker: bool,
    expanded: frozenset[str],
    notes: Notes,
    *,
    converted: bool = False,
) -> set[str]:
    """Remove the blocks a preset suppresses; return the tags now dropped entirely."""
    dropped: set[str] = set()
    fallback = [item for item in buckets.get("SYSTEM_HUMANIZER_RULES", []) if item.fallback]
    if fallback:
        buckets["SYSTEM_HUMANIZER_RULES"] = [i for i in buckets["SYSTEM_HUMANIZER_RULES"] if not i.fallback]
        notes.omit(
            "The built-in fallback system prompt.",
            "The server has no system prompt of its own, and the fallback is dropped while a preset is active.",
            native_source("SYSTEM_HUMANIZER_RULES"),
        )
    for macro, tag in DEDUP_BLOCKS.items():
        if macro not in expanded or not buckets.get(tag):
            continue
        if tag == "KNOWLEDGE_SHORT_TERM_MEMORY":
            kept = [item for item in buckets[tag] if not item.same_channel]
            if len(kept) == len(buckets[tag]):
                continue
            buckets[tag] = kept
            what = "The current channel's short-term memory summary."
        else:
            dropped.add(tag)
            what = f"{BLOCK_NAMES[tag][0].upper()}{BLOCK_NAMES[tag][1:]} ({tag})."
        notes.omit(what, f"A preset node already includes it through {{{{{macro}}}}}.", native_source(tag))

    for identifier, tags in disabled_markers:
        for tag in tags:
            if tag in dropped or not buckets.get(tag):
                continue
            dropped.add(tag)
            notes.omit(
                f"{BLOCK_NAMES[tag][0].upper()}{BLOCK_NAMES[tag][1:]} ({tag}).",
                f"omitted: {identifier} disabled by the preset.",
                native_source(tag),
            )
    # SillyTavern 1.18 sends sample dialogues only at their marker: an order without one sends none
    # (docs/assembly.md), unlike the other blocks, which it appends after the order's last node. A
    # preset converted from text keeps the leftover rule.
    if not converted and buckets.get("DIALOGUE_SAMPLE") and not has_examples_marker:
        dropped.add("DIALOGUE_SAMPLE")
        notes.omit(
            "The sample dialogues (DIALOGUE_SAMPLE).",
            "The preset's order has no dialogueExamples marker: as in SillyTavern 1.18, none are sent.",
            native_source("DIALOGUE_SAMPLE"),
        )
    return dropped


def _segment(key: str, template: CompiledText) -> Segment:
    """A node's segment, with the text every render gives it when that is fixed (identity macros only)."""
    static = static_text(template)
    if static is None:
        return Segment(key=key, template=template)
    return Segment(key=key, template=template, static=static[0], identities=static[1])


def _fixed_text(segment: Segment) -> str | None:
    """The segment's text whatever a render reads, or None when it must be rendered."""
    template = segment.template
    if not template.has_macros and not template.warnings:
        return template.source
    return segment.static


def _claimed_after(nodes: tuple[CompiledNode, ...], active: list[bool], history_at: int | None) -> set[str]:
    """Blocks an enabled node places after chatHistory: they are not leftovers."""
    if history_at is None:
        return set()
    claimed: set[str] = set()
    for index in range(history_at + 1, len(nodes)):
        ident = nodes[index].node.identifier
        if not active[index]:
            continue
        if ident == "main":
            claimed.update(("SYSTEM_HUMANIZER_RULES", "SYSTEM_CHANNEL_PROMPT"))
        elif ident in MARKER_TAG and nodes[index].node.kind == "marker":
            claimed.add(MARKER_TAG[ident])
    first_wi = next((i for i, cn in enumerate(nodes) if active[i] and cn.node.identifier in WORLD_INFO), None)
    if first_wi is not None and first_wi > history_at:
        claimed.add(DOCUMENTS)
    return claimed


def _wrap(items: list[Item], prefix: str, suffix: str, tag: str) -> list[Item]:
    """Legacy marker text around a non-empty block: prefix on its first item, suffix on its last."""
    if not items or (not prefix and not suffix):
        return list(items)
    out = list(items)
    source = (native_source(tag),)
    if prefix:
        out[0] = out[0].with_parts((Part(prefix, source, True), *out[0].parts))
    if suffix:
        out[-1] = out[-1].with_parts((*out[-1].parts, Part(suffix, source, True)))
    return out


def _wrap_format(items: Sequence[Item], template: str, placeholder: str, tag: str) -> Sequence[Item]:
    """A preset's format template (personality_format, wi_format) around each item of a block."""
    if template == placeholder or placeholder not in template:
        return items
    before, _, after = template.partition(placeholder)
    return _wrap_each(items, before, after, tag)


def _wrap_each(items: Sequence[Item], before: str, after: str, tag: str) -> list[Item]:
    source = (native_source(tag),)
    wrapped = []
    for item in items:
        parts = item.parts
        if before:
            parts = (Part(before, source, True), *parts)
        if after:
            parts = (*parts, Part(after, source, True))
        wrapped.append(item.with_parts(parts))
    return wrapped
