"""What World Info contributes to one assembly (docs/worldinfo.md#placement): activation, rendering, then
placement.

`contribute` runs before the preset's nodes are rendered (as in SillyTavern), so the entries' variable
writes come first and `{{outlet::…}}` sees their text. It returns the native items with the World
Info blocks and example dialogues added, the depth injections, the outlet texts, the variables the
preset render starts from, and the explanation (docs/worldinfo.md#the-explanation).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.buckets import TAG_ORDER, BucketDocument, format_sample
from engine.macros import CompiledText, MacroEnv, Segment, compile_text, render_segments
from engine.parts import Injection, Item, Part, Source, Transform, world_info_source
from engine.worldinfo.activate import Activation, ActivationRequest, activate
from engine.worldinfo.compiled import CompiledBook, CompiledEntry
from engine.worldinfo.placement import (
    AN_BOTTOM_RANKS,
    DEPTH_RANKS,
    Change,
    EntrySource,
    ExamplePair,
    Piece,
    Placement,
    place,
)
from engine.worldinfo.replay import replay_state
from engine.worldinfo.scan import ScanMessage, ScanTexts
from engine.worldinfo.settings import WorldInfoSettings
from engine.worldinfo.timed import TimedState

BEFORE_TAG = "KNOWLEDGE_WORLD_INFO_BEFORE"
AFTER_TAG = "KNOWLEDGE_WORLD_INFO_AFTER"
INJECTION_ORDER = 100  # SillyTavern's default: World Info depth entries group with the preset's at 100
INJECTION_INDEX = 1 << 30  # after every preset node of the same depth and order, before tail directives
# The card's depth prompt sits after the Author's Note entries; the note's bottom entries after its top ones.
CARD_DEPTH_INDEX = INJECTION_INDEX + DEPTH_RANKS - 1
AN_BOTTOM_INDEX = INJECTION_INDEX + AN_BOTTOM_RANKS

# The entries' texts after the World Info regex scripts, and the scripts that changed each (by index).
EntryRewrite = Callable[[list[tuple[str, int | None]]], tuple[list[str], Mapping[int, tuple[Transform, ...]]]]


@dataclass(frozen=True, slots=True)
class Replay:
    """Start from the timed state the document's history reaches (docs/worldinfo.md#timed-effects: a sample
    conversation):
    World Info replayed over every message before the last, one message at a time, with `seed`;
    `cache_key` names the token counter and keeps the steps (engine.worldinfo.replay)."""

    seed: int = 0
    cache_key: Hashable | None = None


@dataclass(frozen=True, slots=True)
class WorldInfoInput:
    """The server's World Info for one assembly: compiled active books, settings, and the timed state
    (None: the document's `world_info_state`; with `replay`, the state the history reaches)."""

    books: tuple[CompiledBook, ...] = ()
    settings: WorldInfoSettings = field(default_factory=WorldInfoSettings)
    state: dict[str, Any] | None = None
    char_tags: tuple[str, ...] = ()
    replay: Replay | None = None


@dataclass(frozen=True, slots=True)
class WorldInfoContribution:
    """What the assembler adds for World Info."""

    items: tuple[Item, ...]
    injections: tuple[Injection, ...]
    outlets: dict[str, str]
    variables: dict[str, Any]
    global_variables: dict[str, Any]
    activation: Activation
    warnings: tuple[str, ...] = ()
    # injected entries a regex script changed: their source → (text after the scripts, the change)
    injected_changes: Mapping[Source, tuple[str, Change]] = field(default_factory=dict)
    replayed: dict[str, Any] | None = None  # with a replay: {"messages", "state"} it started from

    def explanation(self) -> dict[str, Any]:
        """The `world_info` object of the output (docs/worldinfo.md#the-explanation)."""
        out = self.activation.to_dict()
        if self.replayed is not None:
            out["replayed"] = self.replayed
        return out

    def mark_injected(self, items: list[Item]) -> list[Item]:
        """`items` with each injected part that holds a changed entry carrying its scripts
        (docs/regex.md#where-they-run).

        Injection builds its parts from texts alone; this puts the transforms back once they are
        placed, and the part's original is its text with each changed entry's text before the scripts.
        """
        if not self.injected_changes:
            return items
        return [self._marked(item) for item in items]

    def _marked(self, item: Item) -> Item:
        parts, touched = list(item.parts), False
        for k, part in enumerate(parts):
            if part.transforms:
                continue
            changes = [self.injected_changes[s] for s in part.sources if s in self.injected_changes]
            if not changes:
                continue
            original = part.text
            for text, change in changes:
                original = original.replace(text, change.original, 1)
            transforms = tuple(dict.fromkeys(t for _, change in changes for t in change.transforms))
            parts[k] = Part(part.text, part.sources, part.trusted, transforms, original)
            touched = True
        return item.with_parts(tuple(parts)) if touched else item


def scan_texts(
    doc: BucketDocument,
    rewritten: Mapping[int, str] | None = None,
    card_texts: Mapping[str, str] | None = None,
) -> ScanTexts:
    """The history and server texts the keys are tested against (built once per document); with
    `rewritten`, the history messages the promptOnly regex scripts changed read as changed, since
    SillyTavern 1.18 scans the chat it is about to send (docs/assembly.md#what-sillytavern-118-corrected);
    `card_texts` holds the active card's `depth_prompt` and `creator_notes`, which the `match*` flags add
    (docs/worldinfo.md)."""
    memo_key = tuple(sorted((card_texts or {}).items()))
    texts: ScanTexts | None = doc.memo.world_info_scan.get(memo_key)
    if texts is None:
        texts = doc.memo.world_info_scan[memo_key] = _scan_texts(doc, card_texts or {})
    if rewritten:
        history = tuple(
            replace(m, text=rewritten[index]) if index in rewritten else m
            for index, m in enumerate(texts.history)
        )
        texts = replace(texts, history=history)
    return texts


def _scan_texts(doc: BucketDocument, card_texts: Mapping[str, str]) -> ScanTexts:
    history = tuple(
        ScanMessage(
            name=m.name or (doc.user_name if m.role == "user" else doc.char_name),
            text=m.content,
            number=index + 1,
        )
        for index, m in enumerate(doc.history)
    )
    return ScanTexts(
        history=history,
        user_persona=doc.user_persona.strip(),
        persona_prompt=doc.persona_prompt.strip(),
        personality="\n".join(doc.personality).strip(),
        scenario=doc.scenario.strip(),
        depth_prompt=card_texts.get("depth_prompt", "").strip(),
        creator_notes=card_texts.get("creator_notes", "").strip(),
    )


def contribute(
    world_info: WorldInfoInput,
    doc: BucketDocument,
    items: tuple[Item, ...],
    *,
    env: MacroEnv,
    seed: int,
    count_tokens: Callable[[str], int],
    sample_header: str,
    rewrite_entries: EntryRewrite | None = None,
    rewritten_history: Mapping[int, str] | None = None,
    card_texts: Mapping[str, str] | None = None,
) -> WorldInfoContribution:
    """Activate, render and place the server's World Info for `doc` (docs/worldinfo.md). `rewrite_entries`
    takes the rendered entries as `(text, depth)` — the depth of an @depth entry, None for the others —
    and gives their texts back after the World Info regex scripts (docs/regex.md#where-they-run), with the
    scripts that changed each (a changed entry's parts carry them and its text before them);
    `rewritten_history` holds the history texts the promptOnly scripts changed, by position."""
    chat_length = doc.chat_length if doc.chat_length is not None else len(doc.history)
    if not world_info.books and world_info.replay is None:
        return _without_books(world_info, doc, items, max(0, chat_length))
    request = ActivationRequest(
        books=world_info.books,
        texts=scan_texts(doc, rewritten_history, card_texts),
        settings=world_info.settings,
        names={"user": doc.user_name, "char": doc.char_name},
        chat_length=max(0, chat_length),
        generation_type=doc.generation_type,
        seed=seed,
        state=world_info.state if world_info.state is not None else doc.world_info_state,
        budget_context=doc.budget.prompt if doc.budget is not None else None,
        char_tags=world_info.char_tags,
    )
    request, replayed = _replayed(request, world_info, count_tokens)
    activation = activate(request, count_tokens=count_tokens)
    render = render_segments(
        [
            Segment(key=f"wi:{a.entry.book}:{a.entry.uid}", template=_template(a.entry))
            for a in activation.activated
        ],
        env=env,
        seed=seed,
        variables=doc.variables,
        global_variables=doc.global_variables,
    )
    texts = {index: out.text for index, out in enumerate(render.segments)}
    texts, changes = _rewritten(texts, activation, rewrite_entries)
    placement = place(activation.activated, texts, changes)
    return WorldInfoContribution(
        items=_with_blocks(items, placement.before, placement.after, placement, sample_header),
        injections=tuple(
            Injection(p.text, p.depth, INJECTION_ORDER, INJECTION_INDEX + p.rank, p.role, _source(p.source))
            for p in placement.injections
        ),
        outlets=placement.outlet_texts(),
        variables=render.variables,
        global_variables=render.global_variables,
        activation=activation,
        warnings=(*activation.warnings, *render.warnings),
        injected_changes={
            _source(p.source): (p.text, p.change) for p in placement.injections if p.change is not None
        },
        replayed=replayed,
    )


def _replayed(
    request: ActivationRequest, world_info: WorldInfoInput, count_tokens: Callable[[str], int]
) -> tuple[ActivationRequest, dict[str, Any] | None]:
    """With a replay asked for, the request starting from the timed state the chat's earlier messages
    leave, and what it started from ({"messages", "state"}); else the request as it is, and None."""
    if world_info.replay is None:
        return request, None
    steps = max(0, len(request.texts.history) - 1)
    start = replay_state(
        replace(request, seed=world_info.replay.seed, generation_type="normal"),
        steps=steps,
        count_tokens=count_tokens,
        cache_key=world_info.replay.cache_key,
    )
    return replace(request, state=start), {"messages": steps, "state": start}


def _rewritten(
    texts: dict[int, str], activation: Activation, rewrite_entries: EntryRewrite | None
) -> tuple[dict[int, str], dict[int, Change]]:
    """The rendered entries' texts after the World Info regex scripts, and what changed each (the
    scripts and the text before them), by the entry's index; the texts as they are without scripts."""
    if rewrite_entries is None or not texts:
        return texts, {}
    depths = [
        a.entry.entry.depth if a.entry.entry.position == AT_DEPTH else None for a in activation.activated
    ]
    rewritten, changed_by = rewrite_entries([(texts[i], depths[i]) for i in range(len(depths))])
    changes = {i: Change(tuple(changed), texts[i]) for i, changed in changed_by.items() if changed}
    return dict(enumerate(rewritten)), changes


def _without_books(
    world_info: WorldInfoInput, doc: BucketDocument, items: tuple[Item, ...], chat_length: int
) -> WorldInfoContribution:
    """No active lorebook (most servers): nothing activates, so nothing is scanned, rendered or placed;
    the timed state passes through, less what a swipe or a deleted message undid
    (docs/worldinfo.md#timed-effects)."""
    state = world_info.state if world_info.state is not None else doc.world_info_state
    budget_context = doc.budget.prompt if doc.budget is not None else None
    activation = Activation(
        budget=world_info.settings.budget_tokens(budget_context),
        state=TimedState(state, chat_length).to_json(),
    )
    return WorldInfoContribution(
        items=items,
        injections=(),
        outlets={},
        variables=dict(doc.variables),
        global_variables=dict(doc.global_variables),
        activation=activation,
    )


def _template(ce: CompiledEntry) -> CompiledText:
    template = _TEMPLATES.get(id(ce))
    if template is None or template[0] is not ce:
        if len(_TEMPLATES) > 100_000:
            _TEMPLATES.clear()
        template = (ce, compile_text(ce.text))
        _TEMPLATES[id(ce)] = template
    return template[1]


AT_DEPTH = 4  # position 4: @depth entries, whose depth bounds the scripts' min/max depth

# Entry texts are compiled once per compiled book (which lives as long as its cache generation).
_TEMPLATES: dict[int, tuple[CompiledEntry, CompiledText]] = {}


def _source(source: EntrySource) -> Source:
    return world_info_source(source.book, source.uid, source.comment)


def _block(tag: str, pieces: Sequence[Piece]) -> Item | None:
    parts: list[Part] = []
    for piece in pieces:
        if parts:
            parts.append(Part("\n", (), True))
        change = piece.change
        if change is None:
            parts.append(Part(piece.text, (_source(piece.source),), True))
        else:
            parts.append(Part(piece.text, (_source(piece.source),), True, change.transforms, change.original))
    return Item(tag=tag, role="system", parts=tuple(parts)) if parts else None


def _with_blocks(
    items: tuple[Item, ...],
    before: Sequence[Piece],
    after: Sequence[Piece],
    placement: Placement,
    header: str,
) -> tuple[Item, ...]:
    """The native items with the two World Info blocks and the example dialogues in their places.

    Native items are in tag order; sample dialogues are ordered by their group, so the top examples
    take the first groups, the server's samples follow, and the bottom examples come last.
    """
    added = [block for block in (_block(BEFORE_TAG, before), _block(AFTER_TAG, after)) if block is not None]
    top = [_sample(pair, header, g) for g, pair in enumerate(placement.examples_top)]
    shift = len(top)
    out = [
        replace(item, group=item.group + shift) if item.tag == "DIALOGUE_SAMPLE" and shift else item
        for item in items
    ]
    last = max((item.group for item in out if item.tag == "DIALOGUE_SAMPLE"), default=shift - 1)
    bottom = [_sample(pair, header, last + 1 + g) for g, pair in enumerate(placement.examples_bottom)]
    added.extend(item for item in (*top, *bottom) if item.text.strip())
    if not added:
        return items
    merged = [*out, *added]
    merged.sort(key=lambda item: (TAG_ORDER.get(item.tag, len(TAG_ORDER)), max(item.group, 0)))
    return tuple(merged)


def _sample(pair: ExamplePair, header: str, group: int) -> Item:
    text = format_sample(pair.user, pair.char, header)
    change = pair.change
    if change is None:
        part = Part(text, (_source(pair.source),), True)
    else:
        original = format_sample(*pair.before, header) if pair.before is not None else change.original
        part = Part(text, (_source(pair.source),), True, change.transforms, original)
    return Item(tag="DIALOGUE_SAMPLE", role="system", parts=(part,), group=group)
