"""Native assembly: the bucket document as tagged items in the fixed order of docs/assembly.md#native-order.

`native_items` gives every non-empty block as an `Item`; `macro_env` gives what the content
macros read ({{description}}, {{personality}}, {{mesExamples}}, …) from the same blocks, so a preset
sees exactly what native assembly would send.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from operator import attrgetter
from typing import Any

from ..buckets import (
    SAMPLE_HEADER,
    TAG_ORDER,
    BucketDocument,
    HistoryMessage,
    SampleDialogue,
    StmLine,
    TaggedItem,
    format_sample,
)
from ..macros import MacroEnv
from ..parts import Item, Message, Part, Transform, native_source, single
from .reuse import Reuse

FALLBACK_SYSTEM_PROMPT = (
    "You are {{char}}, a member of this Discord server. Reply in character, keep it conversational, "
    "and answer the latest message."
)
# A preset's names_behavior (SillyTavern's values): where speaker names go in the history.
NAMES_NONE, NAMES_DEFAULT, NAMES_IN_FIELD, NAMES_IN_CONTENT = -1, 0, 1, 2
_NOT_NAME = re.compile(r"[^a-zA-Z0-9_]")

# Server-configured text: identity macros are resolved in it. Everything else is end-user or
# retrieved text and is sent as it is (docs/assembly.md#order-of-work, last rule).
TRUSTED_TAGS = frozenset(
    {
        "SYSTEM_HUMANIZER_RULES",
        "SYSTEM_CHANNEL_PROMPT",
        "SYSTEM_PERSONA_PROMPT",
        "SYSTEM_PERSONALITY",
        "KNOWLEDGE_SERVER_CONDITIONING",
        "DIALOGUE_SAMPLE",
    }
)


def native_items(
    doc: BucketDocument,
    *,
    stm: tuple[StmLine, ...] | None = None,
    sample_header: str = SAMPLE_HEADER,
    rewritten: Mapping[int, tuple[str, tuple[Transform, ...]]] | None = None,
    names: int = NAMES_DEFAULT,
) -> tuple[Item, ...]:
    """Every non-empty native block of the document as items, in the fixed tag order.

    `stm` replaces the document's inline short-term memory (the stored STM's items);
    `sample_header` replaces the `<START>` line of each sample dialogue (a preset's
    `new_example_chat_prompt`; "" for none); `rewritten` maps a history index to its text after
    the prompt's regex scripts and the scripts that changed it; `names` is where speaker names go
    (a preset's names_behavior, `history_run`). Built once per document and arguments (`doc.memo`)
    when no script changed the history.
    """
    if rewritten:  # depends on the request's scripts and seed: not kept with the document
        return _native_items(doc, stm, sample_header, rewritten, names)
    memo, key = doc.memo, (stm, sample_header, names)
    items: tuple[Item, ...] | None = memo.items.get(key)
    if items is None:
        items = memo.items[key] = _native_items(doc, stm, sample_header, None, names)
        memo.kept.update(map(id, items))
    return items


def doc_reuse(doc: BucketDocument) -> Reuse:
    """What assemblies of this document make again from its native items (engine/assemble/reuse.py)."""
    memo = doc.memo
    reuse: Reuse | None = memo.reuse
    if reuse is None:
        reuse = memo.reuse = Reuse(kept=memo.kept)
    return reuse


def blocks_of(doc: BucketDocument, items: tuple[Item, ...]) -> dict[str, tuple[Item, ...]]:
    """`items` (native items, in runs of one tag) grouped by tag, kept in `doc.memo` for the last
    items tuple asked about (a read-only mapping: callers copy it before changing it)."""
    found = doc.memo.blocks
    if found is not None and found[0] is items:
        return found[1]
    grouped: dict[str, list[Item]] = {}
    for tag, run in groupby(items, attrgetter("tag")):
        grouped.setdefault(tag, []).extend(run)
    blocks = {tag: tuple(run) for tag, run in grouped.items()}
    doc.memo.blocks = (items, blocks)
    return blocks


def ready_messages(
    doc: BucketDocument, seed: int, names: int = 0
) -> tuple[dict[int, Message], dict[int, Message], set[int]]:
    """(messages already made for this document's native items that hold for any seed, keyed by
    id(item) — the history's and those without a `{random}` form —; those made for this seed; the ids
    of the items `doc.memo` keeps alive, whose messages may be added)."""
    memo = doc.memo
    ready = memo.messages.get(names)
    if ready is None:
        ready = memo.messages[names] = dict(history_run(doc, names).messages)
    seeded = memo.seeded_messages.get(names)  # the last seed's only: a seed rarely recurs
    if seeded is None or seeded[0] != seed:
        seeded = memo.seeded_messages[names] = (seed, {})
    return ready, seeded[1], memo.kept


def _native_items(
    doc: BucketDocument,
    stm: tuple[StmLine, ...] | None,
    sample_header: str,
    rewritten: Mapping[int, tuple[str, tuple[Transform, ...]]] | None = None,
    names: int = NAMES_DEFAULT,
) -> tuple[Item, ...]:
    if doc.items is not None:
        return _from_tagged(doc.items)
    memory = doc.short_term_memory if stm is None else stm
    items: list[Item] = []

    def block(tag: str, text: str, role: str = "system", **extra: object) -> None:
        if text.strip():
            items.append(single(tag, role, text, native_source(tag), trusted=tag in TRUSTED_TAGS, **extra))

    channel = doc.channel_prompt
    if channel is not None and channel.mode == "replace" and channel.text.strip():
        block("SYSTEM_HUMANIZER_RULES", channel.text)
    elif doc.system_prompt is not None and doc.system_prompt.strip():
        block("SYSTEM_HUMANIZER_RULES", doc.system_prompt)
    else:
        block("SYSTEM_HUMANIZER_RULES", FALLBACK_SYSTEM_PROMPT, fallback=True)
    if channel is not None and channel.mode == "append":
        block("SYSTEM_CHANNEL_PROMPT", channel.text)
    block("SYSTEM_PERSONA_PROMPT", doc.persona_prompt)
    block("SYSTEM_PERSONALITY", "\n".join(doc.personality))
    block("KNOWLEDGE_SERVER_INFO", doc.server_info)
    block("KNOWLEDGE_SERVER_MEMORIES", _bullets("Server memories:", doc.server_memories))
    block("KNOWLEDGE_SERVER_EMOJIS", _bullets("Custom emojis you can use:", doc.emojis))
    block("KNOWLEDGE_SERVER_STICKERS", _bullets("Stickers you can send:", doc.stickers))
    block("KNOWLEDGE_USERS_IN_CONVERSATION", doc.users_in_conversation)
    for line in memory:
        block("KNOWLEDGE_SHORT_TERM_MEMORY", line.text, line.role, same_channel=line.same_channel)
    block("KNOWLEDGE_SERVER_DOCUMENTS", "\n\n".join(d for d in doc.documents if d.strip()))
    block("KNOWLEDGE_SERVER_CONDITIONING", doc.conditioning)
    for index, pair in enumerate(doc.sample_dialogues):
        block("DIALOGUE_SAMPLE", sample_text(pair, sample_header), group=index)
    grouped = doc.group is not None
    run = (
        _history_run(doc.history, rewritten, names, doc.char_name, grouped)
        if rewritten
        else history_run(doc, names)
    )
    items.extend(run.items)
    return tuple(items)


@dataclass(frozen=True, slots=True)
class HistoryRun:
    """The document's history as native items, with what assembly needs from it, built once per document."""

    items: tuple[Item, ...]
    # Each item's finished message (history text is sent as it is): an assembly that leaves an
    # item unchanged reuses it, so a long history costs no objects per message.
    messages: dict[int, Message]  # id(item) -> message; the run keeps the items alive
    ordered: tuple[Message, ...]  # the same messages, aligned with `items`
    last_user_message: str
    last_message: str
    last_char_message: str
    user_message_times: tuple[datetime, ...]
    blank: bool = False  # some message has nothing to say: kept for depth counting, never sent


def history_run(doc: BucketDocument, names: int = NAMES_DEFAULT) -> HistoryRun:
    """The document's `HistoryRun` for a names behaviour, built on first use and kept in `doc.memo`."""
    key = NAMES_DEFAULT if names in (NAMES_NONE, NAMES_DEFAULT) else names
    runs = doc.memo.history_runs
    run: HistoryRun | None = runs.get(key)
    if run is None:
        run = runs[key] = _history_run(doc.history, None, names, doc.char_name, doc.group is not None)
    return run


def speaker_name(name: str) -> str:
    """A name as SillyTavern puts it in the `name` field: letters, digits and _ only, at most 64."""
    return _NOT_NAME.sub("_", name)[:64]


def _history_run(
    history: tuple[HistoryMessage, ...],
    rewritten: Mapping[int, tuple[str, tuple[Transform, ...]]] | None = None,
    names: int = NAMES_DEFAULT,
    char_name: str = "",
    grouped: bool = False,
) -> HistoryRun:
    """The history as items and messages. Speaker names (docs/fidelity.md#the-deliberate-differences, item 1,
    docs/assembly.md#what-sillytavern-118-corrected): a user message is "Name: text" unless the preset puts
    names in the `name` field (names_behavior 1, every message named); with names_behavior 2 every message is
    "Name: text", the character's included. In a group (docs/groups.md) names_behavior 0 names every message
    too, narrator lines included, and names_behavior 2 every message but the narrator's."""
    source = native_source("DIALOGUE_HISTORY")
    sources = (source,)
    items: list[Item] = []
    messages: dict[int, Message] = {}
    for index, message in enumerate(history):
        role, content = message.role, message.content
        content, transforms = rewritten.get(index, (content, ())) if rewritten else (content, ())
        speaker = message.name or (char_name if role == "assistant" else "")
        field = speaker_name(speaker) if names == NAMES_IN_FIELD and speaker else ""
        # A message with nothing to say (a script may have emptied it) gets no bare "Name: "; it stays
        # an item, so it still counts for depth injections as in SillyTavern, and is never sent.
        prefix = (
            (
                role == "user"
                or (names == NAMES_IN_CONTENT and role != "system")
                or (grouped and names == NAMES_DEFAULT)
            )
            and names != NAMES_IN_FIELD
            and speaker
            and content.strip()
        )
        text = f"{speaker}: {content}" if prefix else content
        original = None
        if transforms:
            before = message.content
            original = f"{speaker}: {before}" if prefix else before
        item = Item(
            "DIALOGUE_HISTORY",
            role,
            (Part(text, sources, False, transforms, original),),
            False,
            -1,
            True,
            False,
            field,
        )
        items.append(item)
        messages[id(item)] = Message(
            role,
            text,
            sources,
            "DIALOGUE_HISTORY",
            True,
            ((source, text),),
            transforms,
            (original,) if original is not None else (),
            field,
        )
    return HistoryRun(
        items=tuple(items),
        messages=messages,
        ordered=tuple(messages.values()),
        blank=any(not item.parts[0].text.strip() for item in items),
        last_user_message=next((m.content for m in reversed(history) if m.role == "user"), ""),
        last_message=history[-1].content if history else "",
        last_char_message=next((m.content for m in reversed(history) if m.role == "assistant"), ""),
        user_message_times=tuple(
            m.timestamp for m in history if m.role == "user" and m.timestamp is not None
        ),
    )


def sample_text(pair: SampleDialogue, header: str = SAMPLE_HEADER) -> str:
    """A sample dialogue as text: a card's block as written, else the pair in the `{{mesExamples}}` format."""
    if pair.block:
        return f"{header}\n{pair.block}" if header else pair.block
    return format_sample(pair.user, pair.char, header)


def macro_env(doc: BucketDocument, items: tuple[Item, ...], *, server_id: int = 0) -> MacroEnv:
    """What the content and clock macros read, taken from the same blocks native assembly sends.

    Kept in `doc.memo` per items tuple (the memo keeps the tuple, so its id stays unique)."""
    key = (id(items), server_id)
    found = doc.memo.envs.get(key)
    if found is not None and found[0] is items:
        kept: MacroEnv = found[1]
        return kept
    env = _macro_env(doc, items, server_id)
    doc.memo.envs[key] = (items, env)
    return env


def _macro_env(doc: BucketDocument, items: tuple[Item, ...], server_id: int) -> MacroEnv:
    by_tag: dict[str, list[Item]] = {}
    for tag, run in groupby(items, attrgetter("tag")):  # native items come in runs of one tag
        by_tag.setdefault(tag, []).extend(run)
    samples = [item.text for item in by_tag.get("DIALOGUE_SAMPLE", ())]
    summary = "\n".join(
        item.text for item in by_tag.get("KNOWLEDGE_SHORT_TERM_MEMORY", ()) if item.same_channel
    )
    if doc.items is not None:
        history = [(item.role, item.text) for item in by_tag.get("DIALOGUE_HISTORY", ())]
        times: tuple[datetime, ...] = ()
        raw = [s.split("\n", 1)[1] if s.startswith(SAMPLE_HEADER + "\n") else s for s in samples]
        personality = "\n".join(item.text for item in by_tag.get("SYSTEM_PERSONALITY", ()))
        description = "\n".join(item.text for item in by_tag.get("SYSTEM_PERSONA_PROMPT", ()))
        last_user = next((text for role, text in reversed(history) if role == "user"), "")
        last = history[-1][1] if history else ""
        last_char = next((text for role, text in reversed(history) if role == "assistant"), "")
    else:
        history_so_far = history_run(doc)
        last_user = history_so_far.last_user_message
        last, last_char = history_so_far.last_message, history_so_far.last_char_message
        times = history_so_far.user_message_times
        samples = [sample_text(p, "") for p in doc.sample_dialogues]
        personality = "\n".join(doc.personality)
        description = doc.persona_prompt
        # SillyTavern's {{mesExamples}}: each block as "<START>\n" + block + "\n", joined as they are;
        # {{mesExamplesRaw}} is a card's text as written (SillyTavern 1.18), else the same text.
        raw = samples = [f"{SAMPLE_HEADER}\n{s.strip()}\n" for s in samples if s.strip()]
        if doc.sample_dialogues_raw is not None:
            raw = [doc.sample_dialogues_raw]
    return MacroEnv(
        description=description,
        personality=personality,
        mes_examples=_joined_examples(samples, doc.items is None),
        mes_examples_raw=_joined_examples(raw, doc.items is None),
        last_user_message=last_user,
        last_message=last,
        last_char_message=last_char,
        summary=summary,
        scenario=doc.scenario,
        persona=doc.user_persona,
        now=doc.now,
        timezone=doc.timezone,
        user_message_times=times,
        server_id=server_id,
        **request_env(doc),
    )


def request_env(doc: BucketDocument) -> dict[str, Any]:
    """The MacroEnv fields SillyTavern 1.18's request macros read (docs/macros.md)."""
    budget = {"max_context": doc.budget.context, "max_response": doc.budget.reply} if doc.budget else {}
    return {
        "model": doc.model,
        "history_count": len(doc.history),
        "generation_type": doc.generation_type,
        **budget,
    }


def _joined_examples(blocks: list[str], whole: bool) -> str:
    """Sample blocks joined: as SillyTavern joins its (each ends in a newline), or with newlines for
    pre-built items."""
    return "".join(blocks) if whole else "\n".join(s for s in blocks if s)


def _bullets(heading: str, entries: tuple[str, ...]) -> str:
    kept = [entry for entry in entries if entry.strip()]
    return "\n".join([heading, *(f"- {entry}" for entry in kept)]) if kept else ""


def _from_tagged(tagged: tuple[TaggedItem, ...]) -> tuple[Item, ...]:
    items: list[Item] = []
    for index, entry in enumerate(tagged):
        if not entry.text.strip():
            continue
        text = entry.text
        if entry.tag == "DIALOGUE_HISTORY" and entry.role == "user" and entry.name:
            text = f"{entry.name}: {text}"
        part = Part(text=text, sources=(native_source(entry.tag),), trusted=entry.tag in TRUSTED_TAGS)
        items.append(
            Item(
                tag=entry.tag,
                role=entry.role,
                parts=(part,),
                fallback=entry.fallback,
                group=index if entry.tag == "DIALOGUE_SAMPLE" else -1,
                history=entry.tag == "DIALOGUE_HISTORY",
            )
        )
    # Pre-built items keep the fixed native order even if the bot sent them shuffled.
    items.sort(key=lambda item: TAG_ORDER[item.tag])
    return tuple(items)
