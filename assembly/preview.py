"""What the preview page shows: the assembly of a sample document, the native assembly beside it,
and where the token budget goes.

`preview_assembly` is the single place the preview builds its inputs: it takes the bucket document
as a dict, so a caller (the sample-conversation feature) can replace its `history` and starting
`variables` before anything is assembled.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine import (
    Assembly,
    BucketDocument,
    BucketError,
    Message,
    Source,
    count_text,
    decode_json,
    parse_buckets,
)
from engine.groups import GroupTurn

from .preview_display import Segment, VariableRow, is_long, segments, snippet, variable_rows
from .selectors import GroupPreview, PresetNotFound, assemble_for_server, group_preview

# Budget bar categories, in prompt order.
CATEGORIES = (
    ("system", "Server prompts"),
    ("preset", "Preset text"),
    ("knowledge", "Server knowledge & memory"),
    ("samples", "Sample dialogues"),
    ("history", "Conversation history"),
    ("assembler", "Assembler notes"),
)


@dataclass(frozen=True, slots=True)
class PreviewOptions:
    preset: str = "active"  # "active", "native", or a preset id
    style: str = ""  # "" = the preset's own
    provider: str = ""
    generation_type: str = ""  # "" = the document's own (docs/assembly.md#generation-types-and-prefill)
    seed: int | None = None
    conversation: int | None = None  # a sample conversation replacing the history and variables
    message: int | None = None  # with a conversation: preview at this message (1-based), else its last
    # "Preview as <member>" (the Groups page): a turn of this group for this member, whose card fills
    # the character's fields in place of the sample's own
    group: str = ""
    speaker: str = ""
    channel: int | None = None  # a stored channel conversation, as it stands now (docs/channels.md#pages)


@dataclass(frozen=True, slots=True)
class BudgetShare:
    key: str
    label: str
    tokens: int
    percent: int  # of the budget (or of the total when there is no budget), 0..100


@dataclass(frozen=True, slots=True)
class PreviewRow:
    """One message of the preview with its token count and how the page shows it."""

    message: Message
    tokens: int
    category: str
    categories: tuple[str, ...] = ()  # of every part (a squashed message holds several), for the filter

    @property
    def segments(self) -> tuple[Segment, ...]:
        return segments(self.message.content)

    @property
    def snippet(self) -> tuple[str, ...]:
        return snippet(self.message.content)

    @property
    def is_long(self) -> bool:
        return is_long(self.message.content)


@dataclass(frozen=True, slots=True)
class Preview:
    error: str = ""
    assembly: Assembly | None = None
    native: Assembly | None = None
    rows: tuple[PreviewRow, ...] = ()
    native_rows: tuple[PreviewRow, ...] = ()
    shares: tuple[BudgetShare, ...] = ()
    limit: int = 0  # the prompt budget, or the total when there is none
    provider_json: str = ""
    generation_json: str = ""  # the sampler parameters sent (engine.sampling)
    variables_json: str = ""
    global_variables_json: str = ""
    variables: tuple[VariableRow, ...] = ()
    global_variables: tuple[VariableRow, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    group: GroupPreview | None = None  # a group turn: the group, who speaks next, the speaker's note


def with_conversation(
    document: dict[str, Any],
    *,
    history: Sequence[dict[str, Any]] | None = None,
    variables: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The document with its `history` and starting `variables` replaced (when given); a replaced
    history is the whole chat, so the document's own chat length goes."""
    out = dict(document)
    if history is not None:
        out["history"] = list(history)
        out.pop("chat_length", None)
    if variables is not None:
        out["variables"] = dict(variables)
    return out


def preview_assembly(
    *,
    server_id: int,
    document: Any,
    options: PreviewOptions,
    history: Sequence[dict[str, Any]] | None = None,
    variables: dict[str, Any] | None = None,
) -> Preview:
    """The preview of `document` (a decoded bucket document) for the server, or a Preview whose
    `error` is one sentence (bad document, unknown preset). A replaced `history` (a sample
    conversation) also replaces the World Info timed state: the one its messages reach
    (docs/worldinfo.md#timed-effects)."""
    if not isinstance(document, dict):
        return Preview(error="The sample must be a JSON object.")
    if options.group and options.speaker and "group" not in document:
        # Read as the group turn it becomes: a group history may hold system (narrator) lines, such
        # as a member's private context (docs/channels.md#private-context).
        document = {**document, "group": {"name": options.group, "speaker": options.speaker}}
    try:
        doc = parse_buckets(with_conversation(document, history=history, variables=variables))
        if options.generation_type:
            doc = replace(doc, generation_type=options.generation_type)
        if options.group and options.speaker:
            doc = as_member(doc, options.group, options.speaker)
        # the earlier messages' World Info draws: the chosen seed, else a fixed one (so they are cached)
        replay = (
            (options.seed if options.seed is not None else doc.seed or 0) if history is not None else None
        )
        main = _assemble(server_id, doc, options, native=options.preset == "native", replay=replay)
        native = _assemble(server_id, doc, options, native=True, seed=main.seed, replay=replay)
    except BucketError as exc:
        return Preview(error=exc.message)
    except PresetNotFound as exc:
        return Preview(error=exc.message)
    except ValueError as exc:
        return Preview(error=str(exc))
    rows = preview_rows(main)
    limit = main.budget.prompt if main.budget else max(main.tokens.total, 1)
    return Preview(
        assembly=main,
        native=native,
        rows=rows,
        native_rows=preview_rows(native),
        shares=budget_shares(rows, limit),
        limit=limit,
        provider_json=_pretty(main.provider_payload) if main.provider_payload is not None else "",
        generation_json=_pretty(dict(main.generation.params)) if main.generation is not None else "",
        variables_json=_pretty(main.variables),
        global_variables_json=_pretty(main.global_variables),
        variables=variable_rows(main.variables),
        global_variables=variable_rows(main.global_variables),
        group=group_preview(server_id, doc, main.seed),
    )


def as_member(doc: BucketDocument, group: str, speaker: str) -> BucketDocument:
    """The sample as a turn of `speaker` in `group`: the speaker's card wins over the sample's own
    character fields (its description, personality, scenario and examples give way, so the card
    fills them as it fills an empty document), and `{{char}}` is the speaker."""
    return replace(
        doc,
        group=GroupTurn(name=group, speaker=speaker),
        char_name=speaker,
        persona_prompt="",
        personality=(),
        scenario="",
        sample_dialogues=(),
        sample_dialogues_raw=None,
    )


def parse_document_text(text: str) -> tuple[Any, str]:
    """The decoded JSON of a textarea, or (None, one-sentence error)."""
    try:
        return decode_json(text, what="The sample"), ""
    except BucketError as exc:
        return None, exc.message


def _assemble(
    server_id: int,
    doc: BucketDocument,
    options: PreviewOptions,
    *,
    native: bool,
    seed: int | None = None,
    replay: int | None = None,
) -> Assembly:
    preset_id = int(options.preset) if options.preset.isdigit() else None
    return assemble_for_server(
        server_id=server_id,
        doc=doc,
        preset_id=preset_id,
        native=native,
        style=options.style or None,
        provider=options.provider or None,
        seed=seed if seed is not None else options.seed,
        replay_seed=replay,
        channel=options.channel,
    )


def category_of(message: Message) -> str:
    """Which budget category a message counts under (by its first source)."""
    return _category_of_source(message.sources[0] if message.sources else None)


def _category_of_source(source: Source | None) -> str:
    if source is None or source.kind == "assembler":
        return "assembler"
    if source.kind in ("node", "preset_setting"):
        return "preset"
    if source.tag.startswith("SYSTEM_"):
        return "system"
    if source.tag == "DIALOGUE_SAMPLE":
        return "samples"
    if source.tag == "DIALOGUE_HISTORY":
        return "history"
    return "knowledge"


def _categories(message: Message) -> tuple[str, ...]:
    found = {category_of(message)} | {_category_of_source(source) for source, _ in message.pieces}
    return tuple(key for key, _ in CATEGORIES if key in found)


def preview_rows(assembly: Assembly) -> tuple[PreviewRow, ...]:
    return tuple(
        PreviewRow(message=m, tokens=t, category=category_of(m), categories=_categories(m))
        for m, t in zip(assembly.messages, assembly.tokens.per_message, strict=True)
    )


def budget_shares(rows: tuple[PreviewRow, ...], limit: int) -> tuple[BudgetShare, ...]:
    totals = dict.fromkeys((key for key, _ in CATEGORIES), 0)
    for row in rows:
        for category, tokens in _split(row).items():
            totals[category] += tokens
    return tuple(
        BudgetShare(
            key=key, label=label, tokens=totals[key], percent=min(100, round(100 * totals[key] / limit))
        )
        for key, label in CATEGORIES
    )


def _split(row: PreviewRow) -> dict[str, int]:
    """A message's tokens shared among the categories of its parts (a squashed system message holds
    server prompts and preset text together), in proportion to each part's own token count."""
    weights: dict[str, int] = {}
    for source, text in row.message.pieces:
        category = _category_of_source(source)
        weights[category] = weights.get(category, 0) + count_text(text)
    total = sum(weights.values())
    if len(weights) < 2 or total == 0:
        return {row.category: row.tokens}
    shares = {category: row.tokens * weight // total for category, weight in weights.items()}
    shares[row.category] = shares.get(row.category, 0) + row.tokens - sum(shares.values())
    return shares


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False, default=str)
