"""The top-level `assemble`: a bucket document (and maybe a preset) in, the exact messages out.

Pure: no Django, no I/O, never writes anything. The order of work follows SPEC §3.3: route, build
native items, render the preset's macros, rearrange, squash, trim to the budget, inject, add the
terminal note, resolve identity macros in trusted text, shape for the provider, count tokens.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from presets.compiled import CompiledPreset

from .buckets import BucketDocument, Budget, StmLine
from .injection import STYLES, place_injections, tail_injections
from .native import SAMPLE_HEADER, macro_inputs, native_items
from .parts import Item, Message, Notes, Omission, Part, Source, assembler_source, native_source
from .providers import PROVIDERS, provider_texts, shape
from .rearrange import Arrangement, native_arrangement, node_is_active, rearrange
from .tokens import DEFAULT_ENCODING, ENCODINGS, REPLY_PRIMING, TokenReport, count_messages, message_tokens

SAMPLE_NOTE = (
    "(The dialogues above are style examples for reference only; they are not the conversation to "
    "continue. Reply to the latest message of the real conversation.)"
)


@dataclass(frozen=True, slots=True)
class StoredStm:
    """Short-term memory computed from storage (it replaces the document's inline STM)."""

    lines: tuple[StmLine, ...]
    tail_directive: str | None = None


@dataclass(frozen=True, slots=True)
class Assembly:
    """Everything one assembly produced (SPEC §3.5)."""

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
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape shared by the CLI and the API."""
        out: dict[str, Any] = {
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
) -> Assembly:
    """The messages the bot would send for `doc`, rearranged by `preset` when one is given.

    `style` overrides the preset's injection style; `provider` adds that provider's request body;
    `stm` replaces the document's inline short-term memory; `seed` overrides the document's seed
    (when neither is given one is drawn and returned); `count_tokens=False` skips the counting (zeros,
    for timing the assembly alone). Raises ValueError for an unknown style,
    provider or encoding.
    """
    if style is not None and style not in STYLES:
        raise ValueError(f"Unknown injection style {style!r}: use merge or standalone.")
    if provider is not None and provider not in PROVIDERS:
        raise ValueError(f"Unknown provider {provider!r}: use openai, anthropic or gemini.")
    if encoding not in ENCODINGS:
        raise ValueError(f"Unknown encoding {encoding!r}: use o200k_base or cl100k_base.")
    if seed is None:
        seed = doc.seed if doc.seed is not None else secrets.randbelow(2**31)
    notes = Notes()
    if preset is not None and doc.impersonation:
        notes.warn("Impersonation uses native assembly: presets are character-centric.")
        preset = None

    lines = stm.lines if stm is not None else None
    header = preset.settings.new_example_chat_prompt if preset is not None else SAMPLE_HEADER
    items = native_items(doc, stm=lines, sample_header=header)
    variables, global_variables = dict(doc.variables), dict(doc.global_variables)
    unknown: tuple[str, ...] = ()
    if preset is None:
        arrangement = native_arrangement(items)
        style_used = style or "merge"
    else:
        rendered, expanded, render = _render_preset(doc, preset, items, seed, server_id, notes)
        variables, global_variables = render.variables, render.global_variables
        unknown = tuple(sorted(render.unknown_macros))
        arrangement = rearrange(items, preset, rendered, expanded, notes)
        style_used = style or preset.injection_style or "merge"
        if preset.settings.squash_system_messages:
            arrangement.before = _squash(arrangement.before)
            arrangement.after = _squash(arrangement.after)

    directives = [*doc.tail_directives, *([stm.tail_directive] if stm and stm.tail_directive else [])]
    arrangement.injections.extend(tail_injections(directives))
    if doc.budget is not None:
        _trim_to_budget(arrangement, doc.budget, encoding, notes)
    arrangement = place_injections(arrangement, style_used)

    ordered = [*arrangement.before, *arrangement.history, *arrangement.after]
    if ordered and ordered[-1].tag == "DIALOGUE_SAMPLE":
        ordered.append(
            Item(tag="", role="user", parts=(Part(SAMPLE_NOTE, (assembler_source("sample_note"),), False),))
        )
    messages = tuple(_to_messages(ordered, doc, seed))

    payload = shape(provider, messages) if provider else None
    if not count_tokens:
        per_message, total = tuple(0 for _ in messages), 0
    else:
        per_message = tuple(message_tokens(m.content, encoding) for m in messages)
        if payload is not None and provider != "openai":
            total = count_messages(provider_texts(provider, payload), encoding)
        else:
            total = sum(per_message) + REPLY_PRIMING
    tokens = TokenReport(
        encoding=encoding, exact=provider in (None, "openai"), per_message=per_message, total=total
    )
    if count_tokens and doc.budget is not None and total > doc.budget.prompt:
        notes.warn(
            f"The prompt uses {total} tokens, over the budget of {doc.budget.prompt} "
            f"(context {doc.budget.context} minus reply {doc.budget.reply})."
        )
    return Assembly(
        mode="native" if preset is None else "preset",
        preset_name=None if preset is None else preset.name,
        style=style_used,
        messages=messages,
        warnings=tuple(notes.warnings),
        omitted=tuple(notes.omitted),
        variables=variables,
        global_variables=global_variables,
        seed=seed,
        tokens=tokens,
        provider=provider,
        provider_payload=payload,
        budget=doc.budget,
        unknown_macros=unknown,
    )


def _render_preset(
    doc: BucketDocument,
    preset: CompiledPreset,
    items: tuple[Item, ...],
    seed: int,
    server_id: int,
    notes: Notes,
) -> tuple[Mapping[int, str], frozenset[str], Any]:
    """Render every active content node in node order (SPEC §2.2); texts keyed by node position."""
    from presets.macros import MacroEnv, Segment, render_segments

    inputs = macro_inputs(doc, items)
    env = MacroEnv(
        personality=inputs.personality,
        description=inputs.description,
        mes_examples=inputs.mes_examples,
        mes_examples_raw=inputs.mes_examples_raw,
        last_user_message=inputs.last_user_message,
        last_message=inputs.last_message,
        last_char_message=inputs.last_char_message,
        summary=inputs.summary,
        now=doc.now,
        timezone=doc.timezone,
        user_message_times=inputs.user_message_times,
        server_id=server_id,
    )
    positions = [
        index
        for index, cn in enumerate(preset.nodes)
        if cn.node.kind == "content" and cn.template is not None and node_is_active(cn)
    ]
    segments = [
        Segment(key=preset.nodes[i].node.identifier, template=preset.nodes[i].template) for i in positions
    ]
    render = render_segments(
        segments, env=env, seed=seed, variables=doc.variables, global_variables=doc.global_variables
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
    return rendered, expanded, render


def _squash(items: list[Item]) -> list[Item]:
    """Consecutive unnamed system items merged with "\\n" (sample dialogues keep their own turns)."""
    out: list[Item] = []
    for item in items:
        mergeable = item.role == "system" and item.tag != "DIALOGUE_SAMPLE"
        prev = out[-1] if out else None
        if mergeable and prev is not None and prev.role == "system" and prev.tag != "DIALOGUE_SAMPLE":
            joiner = Part("\n", (), False)
            out[-1] = prev.with_parts((*prev.parts, joiner, *item.parts))
        else:
            out.append(item)
    return out


def _trim_to_budget(arr: Arrangement, budget: Budget, encoding: str, notes: Notes) -> None:
    """Drop whole sample pairs (last first), then the oldest history items, until the prompt fits."""

    def cost(item: Item) -> int:
        return message_tokens(item.text, encoding)

    injected = sum(message_tokens(inj.text, encoding) for inj in arr.injections)
    total = sum(cost(i) for i in (*arr.before, *arr.history, *arr.after)) + injected + REPLY_PRIMING
    limit = budget.prompt
    if total <= limit:
        return
    for run in (arr.after, arr.before):
        groups = sorted({i.group for i in run if i.tag == "DIALOGUE_SAMPLE"}, reverse=True)
        for group in groups:
            if total <= limit:
                break
            pair = [i for i in run if i.tag == "DIALOGUE_SAMPLE" and i.group == group]
            total -= sum(cost(i) for i in pair)
            run[:] = [i for i in run if not (i.tag == "DIALOGUE_SAMPLE" and i.group == group)]
            notes.omit(
                f"Sample dialogue {group + 1}.",
                "Trimmed to fit the token budget (sample dialogues go first).",
                native_source("DIALOGUE_SAMPLE"),
            )
    dropped = 0
    while total > limit and len(arr.history) > 1:
        total -= cost(arr.history.pop(0))
        dropped += 1
    if dropped:
        notes.omit(
            f"The {dropped} oldest history message{'s' if dropped != 1 else ''}.",
            "Trimmed to fit the token budget.",
            native_source("DIALOGUE_HISTORY"),
        )
    if total > limit:
        notes.warn(
            f"The system and preset items alone need about {total} tokens, more than the budget of {limit}; "
            "they are never trimmed."
        )


def _to_messages(items: list[Item], doc: BucketDocument, seed: int) -> list[Message]:
    from presets.macros import resolve_identity

    messages = []
    for item in items:
        texts = [
            resolve_identity(p.text, user=doc.user_name, char=doc.char_name, seed=seed)
            if p.trusted
            else p.text
            for p in item.parts
        ]
        text = "".join(texts)
        if not text.strip():
            continue
        sources: dict[Source, None] = {}
        for part in item.parts:
            for source in part.sources:
                sources[source] = None
        pieces = tuple((p.sources[0], t) for p, t in zip(item.parts, texts, strict=True) if p.sources and t)
        messages.append(
            Message(
                role=item.role,
                content=text,
                sources=tuple(sources),
                tag=item.tag,
                history=item.history,
                pieces=pieces,
            )
        )
    return messages
