"""The assembly's finishing step: the arranged items trimmed to the budget, squashed as SillyTavern
squashes, made into messages (identity macros resolved, the history's messages reused) and counted.

Pure (no Django); `engine.assemble` calls these in that order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .buckets import BucketDocument, Budget
from .macros import depends_on_seed, resolve_identity
from .native import HistoryRun, history_run, ready_messages
from .parts import Item, Message, Notes, Part, Source, Transform, native_source
from .providers import provider_texts, shape
from .rearrange import Arrangement, Injection
from .tokens import REPLY_PRIMING, TokenReport, count_messages, count_text, is_exact, message_tokens

ROLE_TOKENS = 1  # "system", "user" and "assistant" are one token each in every encoding we count with


def count_tokens_of(
    messages: tuple[Message, ...],
    payload: dict[str, Any] | None,
    *,
    provider: str | None,
    encoding: str,
    count_tokens: bool,
    names: tuple[str, str] = ("", ""),
) -> TokenReport:
    """Counts for `provider` (the request's, else the server's): exact for OpenAI, else the documented
    estimate over that provider's shaped request (SPEC §10.4)."""
    exact = is_exact(provider)
    if not count_tokens:
        return TokenReport(encoding, exact, (0,) * len(messages), 0, provider)
    per_message = tuple(message_tokens(m.content, encoding) for m in messages)
    if provider is not None and provider != "openai":
        shaped = payload if payload is not None else shape(provider, messages, user=names[0], char=names[1])
        total = count_messages(provider_texts(provider, shaped), encoding)
    else:
        total = sum(per_message) + REPLY_PRIMING
    return TokenReport(encoding, exact, per_message, total, provider)


def squash(items: list[Item], history: tuple[int, int]) -> tuple[list[Item], tuple[int, int]]:
    """SillyTavern's squash on the final list (SPEC §11.2): consecutive unnamed system items joined
    with "\n" (its separators never), empty system items dropped; the history's range moved along."""
    out: list[Item] = []
    start, stop = history
    first = last = -1  # where the history's first and last items went in `out`
    joinable = False  # whether the last item out may take the next one
    append = out.append
    for index, item in enumerate(items):
        if item.role != "system":  # most items (the history's): kept as they are
            append(item)
            joinable = False
        elif not any(part.text for part in item.parts):
            if index == start:
                first = len(out)
            if index == stop - 1:
                last = len(out)
            continue
        elif joinable and item.squash and not item.name:
            out[-1] = out[-1].with_parts((*out[-1].parts, Part("\n", (), False), *item.parts))
        else:
            append(item)
            joinable = item.squash and not item.name
        if index == start:
            first = len(out) - 1
        if index == stop - 1:
            last = len(out) - 1
    if stop <= start:
        at = first if first >= 0 else len(out)
        return out, (at, at)
    return out, (first, last + 1)


def trim_to_budget(
    arr: Arrangement, budget: Budget, encoding: str, notes: Notes, *, doc: BucketDocument, seed: int
) -> None:
    """Drop whole sample pairs (last first), then the oldest history items, until the prompt fits."""
    user, char = doc.user_name, doc.char_name

    def cost(item: Item) -> int:
        # what the message will hold (names in place of the identity macros), counted as SillyTavern
        # counts a message when it fits the context: the role and the name count too
        text = "".join(
            resolve_identity(p.text, user=user, char=char, seed=seed) if p.trusted else p.text
            for p in item.parts
        )
        named = count_text(item.name, encoding) + 1 if item.name else 0
        return message_tokens(text, encoding) + ROLE_TOKENS + named

    def injected_cost(inj: Injection) -> int:
        return (
            message_tokens(resolve_identity(inj.text, user=user, char=char, seed=seed), encoding)
            + ROLE_TOKENS
        )

    injected = sum(injected_cost(inj) for inj in arr.injections)
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
    # Oldest first, as SillyTavern 1.18 keeps the newest messages that fit: an injection as deep as the
    # history still kept sits before all of it, so it goes before the oldest message (the deepest first).
    while total > limit:
        deep = [inj for inj in arr.injections if inj.depth >= len(arr.history)]
        if deep:
            oldest = max(deep, key=lambda inj: inj.depth)
            arr.injections.remove(oldest)
            total -= injected_cost(oldest)
            notes.omit(
                f"An in-chat {oldest.role} message at depth {oldest.depth}.",
                "Trimmed to fit the token budget (it sits before the oldest history message kept).",
                oldest.source,
            )
            continue
        if len(arr.history) <= 1:
            break
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


def to_messages(
    items: list[Item],
    doc: BucketDocument,
    seed: int,
    history: tuple[int, int],
    names: int = 0,
    blank: list[Item] | None = None,
) -> list[Message]:
    ready, per_seed, kept = ready_messages(doc, seed, names)

    def finish(run: Sequence[Item]) -> list[Message]:
        """The run's messages: the document's items have theirs already; the others (the preset's,
        the wrapped and the changed ones) are built here, and blank ones left out."""
        out = []
        for item in run:
            message = ready.get(id(item)) or per_seed.get(id(item))
            if message is None:
                message = _message(item, doc, seed)
                if message is None:
                    if blank is not None:
                        blank.append(item)
                    continue
                if id(item) in kept:  # a native item as the document gave it
                    seeded = any(p.trusted and depends_on_seed(p.text) for p in item.parts)
                    (per_seed if seeded else ready)[id(item)] = message
            out.append(message)
        return out

    start, stop = history
    run = history_run(doc, names)
    chat = _history_messages(tuple(items[start:stop]), run, finish)
    if run.blank or not run.items:  # emptied messages counted for depth; never sent (SPEC §11.1 item 4)
        chat = [m for m in chat if not m.history or m.content.strip()]
    return finish(items[:start]) + chat + finish(items[stop:])


_CHUNK = 32


def _history_messages(
    items: tuple[Item, ...], run: HistoryRun, finish: Callable[[Sequence[Item]], list[Message]]
) -> list[Message]:
    """The history's messages, reusing those the document's history run made.

    The history usually holds the run's items in order (maybe without the oldest, trimmed, or the
    last, continued; a few changed by injections): runs of them are matched by slices, which
    compare item by item in C, and only a chunk that differs goes through `finish`."""
    known, messages = run.items, run.ordered
    if not known or not items:  # pre-built items (SPEC §3.2) have no history run
        return finish(items)
    offset = 0 if items[0] is known[0] else max(0, len(known) - len(items))
    out: list[Message] = []
    for start in range(0, len(items), _CHUNK):
        chunk = items[start : start + _CHUNK]
        at = offset + start
        if chunk == known[at : at + len(chunk)]:  # equal items make equal messages
            out += messages[at : at + len(chunk)]
        else:
            out += finish(chunk)
    return out


def _message(item: Item, doc: BucketDocument, seed: int) -> Message | None:
    """The item as a message (identity macros resolved in its trusted parts); None when it is blank."""
    if len(item.parts) == 1:  # most items: one part, one source
        part = item.parts[0]
        text = (
            resolve_identity(part.text, user=doc.user_name, char=doc.char_name, seed=seed)
            if part.trusted
            else part.text
        )
        if not text.strip():
            return None
        one_sources = part.sources if len(part.sources) < 2 else tuple(dict.fromkeys(part.sources))
        one_pieces: tuple[tuple[Source, str], ...] = ((part.sources[0], text),) if part.sources else ()
        one_originals: tuple[str, ...] = (part.original,) if part.original is not None else ()
        return Message(
            item.role,
            text,
            one_sources,
            item.tag,
            item.history,
            one_pieces,
            part.transforms,
            one_originals,
            item.name,
        )
    user, char = doc.user_name, doc.char_name
    texts: list[str] = []
    sources: dict[Source, None] = {}
    pieces: list[tuple[Source, str]] = []
    transforms: tuple[Transform, ...] = ()
    originals: list[str] = []
    for part in item.parts:  # one pass: squashed items have dozens of parts
        text = resolve_identity(part.text, user=user, char=char, seed=seed) if part.trusted else part.text
        texts.append(text)
        if part.sources:
            sources.update(dict.fromkeys(part.sources))
            if text:
                pieces.append((part.sources[0], text))
        if part.transforms:
            transforms += part.transforms
        if part.original is not None:
            originals.append(part.original)
    content = "".join(texts)
    if not content.strip():
        return None
    return Message(
        item.role,
        content,
        tuple(sources),
        item.tag,
        item.history,
        tuple(pieces),
        transforms,
        tuple(originals),
        item.name,
    )
