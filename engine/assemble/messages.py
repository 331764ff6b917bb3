"""The assembly's finishing step: the arranged items trimmed to the budget, squashed as SillyTavern
squashes, made into messages (identity macros resolved, the history's messages reused) and counted.

Pure (no Django); `engine.assemble` calls these in that order."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

from ..buckets import BucketDocument, Budget
from ..macros import depends_on_seed, resolve_identity
from ..parts import Injection, Item, Message, Notes, Part, Source, Transform, native_source
from ..providers import provider_texts, shape
from ..tokens import REPLY_PRIMING, TokenReport, count_messages, count_text, is_exact, message_tokens
from .injection import injected_messages
from .native import HistoryRun, history_run, ready_messages
from .rearrange import Arrangement
from .resquash import SEPARATOR, resquashed, squashed
from .reuse import Reuse, all_vouched
from .spliced import MIN_PARTS, spliced_message

_ROLE = attrgetter("role")
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
    estimate over that provider's shaped request (docs/assembly.md#tokens)."""
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


def squash(
    items: list[Item], history: tuple[int, int], reuse: tuple[Reuse, ...] = (), *, plain_history: bool = False
) -> tuple[list[Item], tuple[int, int]]:
    """SillyTavern's squash on the final list (docs/assembly.md#what-sillytavern-118-corrected):
    consecutive unnamed system items joined with "\n" (its separators never), empty system items
    dropped; the history's range moved along.

    Only the system items need a look: the runs between them (most of the history) are copied whole,
    found by `list.index` over the roles, so a long history costs a few C-level passes. A run of items
    joined before gives the same joined item (engine/assemble/reuse.py: the preset's, then the document's).
    `plain_history` says the history's range holds no system item (the caller knows it from the
    document): what comes before and after it then squashes on its own, in place around the history
    (`items` is then the caller's own list, changed and returned: a long history is not copied)."""
    out: list[Item] = []
    start, stop = history
    if plain_history and start < stop:
        head = _squashed_run(items[:start], reuse) if reuse and start else squash(items[:start], (0, 0))[0]
        tail = items[stop:]
        if tail:
            items[stop:] = _squashed_run(tail, reuse) if reuse else squash(tail, (len(tail), len(tail)))[0]
        items[:start] = head
        return items, (len(head), len(head) + stop - start)
    first = last = -1  # where the history's first and last items went in `out`
    chain: list[Item] = []  # the system items being joined into out[-1]
    roles = list(map(_ROLE, items))
    size = len(items)
    index = 0
    if reuse and 0 < start < stop <= size and roles[start] != "system":
        # What comes before the history squashes on its own (a user or assistant item ends any run):
        # the same items as before give the same squashed items.
        out, index = _squashed_run(items[:start], reuse), start
    # and so does what comes after it, when a user or assistant item ends the history
    end = stop if reuse and start < stop < size and roles[stop - 1] != "system" else size
    while index < end:
        if roles[index] != "system":  # a run of user and assistant items: kept as they are
            try:
                system = roles.index("system", index, end)
            except ValueError:
                system = end
            if len(chain) > 1:
                out[-1] = _joined(chain, reuse)
            chain = []
            shift = len(out) - index
            out += items[index:system]
            if index <= start < system:
                first = start + shift
            if index <= stop - 1 < system:
                last = stop - 1 + shift
            index = system
            if index == end:
                break
        item = items[index]
        parts = item.parts
        if not (parts[0].text if len(parts) == 1 else any(part.text for part in parts)):
            if index == start:
                first = len(out)
            if index == stop - 1:
                last = len(out)
            index += 1
            continue
        if chain and item.squash and not item.name:
            chain.append(item)
        else:
            if len(chain) > 1:
                out[-1] = _joined(chain, reuse)
            out.append(item)
            chain = [item] if item.squash and not item.name else []
        if index == start:
            first = len(out) - 1
        if index == stop - 1:
            last = len(out) - 1
        index += 1
    if len(chain) > 1:
        out[-1] = _joined(chain, reuse)
    if end < size:
        out += _squashed_run(items[end:], reuse)
    if stop <= start:
        at = first if first >= 0 else len(out)
        return out, (at, at)
    return out, (first, last + 1)


def squash_kept(
    items: list[Item], history: tuple[int, int], reuse: tuple[Reuse, ...], *, plain_history: bool = False
) -> tuple[list[Item], tuple[int, int]]:
    """`squash`, kept with the document for the very same items when every one is vouched for: a
    prompt that sends no chat (a summariser's) squashes alike on every assembly. With a history in
    the list, `squash` keeps the runs around it instead: a long list is not worth a key of its own."""
    if plain_history or not reuse or history[0] < history[1]:
        return squash(items, history, reuse, plain_history=plain_history)
    table = reuse[-1]
    key = (*history, *map(id, items))
    found = table.whole.get(key)
    if found is not None and all(map(operator.is_, found[0], items)):
        return list(found[1]), found[2]
    made, moved = squash(items, history, reuse)
    if all_vouched(reuse, items):
        table.keep_whole(key, (tuple(items), tuple(made), moved))
    return made, moved


def _squashed_run(prefix: list[Item], reuse: tuple[Reuse, ...]) -> list[Item]:
    """`prefix` (what comes before or after a history with no system item) squashed, kept with the
    document when it holds only items one of `reuse` vouches for."""
    table = reuse[-1]
    key = tuple(map(id, prefix))
    found = table.squashed.get(key)
    again = None
    if found is not None and all(map(operator.is_, found[0], prefix)):
        if found[1] is not None:
            return list(found[1])
        # its second time: squashed with its joins kept, so that its messages are kept too
    else:  # the last run as long, with only some items changed in place (a preset's nodes that draw)
        before = table.resquash.get(len(prefix))
        again = resquashed(before, prefix) if before is not None else None
    fresh = again is None
    if again is None:
        again = squashed(prefix, lambda chain: _joined(chain, reuse))
    made = list(again.made)
    table.keep_resquash(len(prefix), again)
    if all_vouched(reuse, prefix):  # a run made again in place is kept once it comes back
        table.keep_squashed(key, (tuple(prefix), tuple(made) if fresh else None))
    return made


def _joined(chain: list[Item], reuse: tuple[Reuse, ...]) -> Item:
    """The chain's items as one: the first one's fields, every part, a line break between items."""
    key = tuple(map(id, chain))
    for table in reuse:
        kept = table.joined.get(key)
        if kept is not None and all(map(operator.is_, kept[0], chain)):
            return kept[1]
    parts: list[Part] = list(chain[0].parts)
    for item in chain[1:]:
        parts.append(SEPARATOR)
        parts += item.parts
    joined = chain[0].with_parts(tuple(parts))
    if reuse:  # kept by the preset's table when it vouches for every item, else by the document's
        keeper: Reuse | None = reuse[0]
        for item in chain:
            if keeper is reuse[0] and reuse[0].vouches(item):
                continue
            keeper = reuse[-1] if len(reuse) > 1 else None
            if keeper is None or not any(table.vouches(item) for table in reuse):
                keeper = None
                break
        if keeper is not None:
            keeper.join(tuple(chain), joined)
    return joined


def trim_to_budget(
    arr: Arrangement, budget: Budget, encoding: str, notes: Notes, *, doc: BucketDocument, seed: int
) -> None:
    """Keep the newest history items that fit, then the sample dialogues, in order, with what the history
    left (docs/assembly.md#order-of-work, step 11): SillyTavern 1.18 fills the history first and adds each
    example block (its separator and messages) while the whole block fits, stopping at the first that
    does not (openai.js, populateDialogueExamples and its `canAffordAll`)."""
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

    def text_cost(text: str) -> int:
        return message_tokens(resolve_identity(text, user=user, char=char, seed=seed), encoding) + ROLE_TOKENS

    chat = _chat_costs(arr, cost, text_cost)
    samples: dict[int, int] = {}  # block -> its cost, in block order
    total = REPLY_PRIMING
    for run in (arr.before, arr.after):
        for item in run:
            if _is_sample(item):
                samples[item.group] = samples.get(item.group, 0) + cost(item)
            else:
                total += cost(item)
    limit = budget.prompt
    if total + sum(c for c, _ in chat) + sum(samples.values()) <= limit:
        return
    total = _trim_chat(arr, chat, total, limit, notes)
    total = _trim_samples(arr, samples, total, limit, notes)
    if total > limit:
        notes.warn(
            f"The system and preset items alone need about {total} tokens, more than the budget of {limit}; "
            "they are never trimmed."
        )


def _is_sample(item: Item) -> bool:
    return item.tag == "DIALOGUE_SAMPLE"


def _chat_costs(
    arr: Arrangement, cost: Callable[[Item], int], text_cost: Callable[[str], int]
) -> list[tuple[int, Item | list[Injection]]]:
    """The chat as SillyTavern 1.18 fills it (openai.js, populateChatHistory): the history with the
    in-chat messages at their depths (placed in the whole history first), oldest first, each with
    its cost: (cost, a history item or the injections joined)."""
    history = arr.history
    count = len(history)
    at: dict[int, list[Injection]] = {}
    for inj in arr.injections:
        at.setdefault(count - min(inj.depth, count), []).append(inj)
    chat: list[tuple[int, Item | list[Injection]]] = []
    for position in range(count + 1):
        chat += [(text_cost(text), same) for _role, text, same in injected_messages(at.get(position, []))]
        if position < count:
            chat.append((cost(history[position]), history[position]))
    return chat


def _trim_chat(
    arr: Arrangement, chat: list[tuple[int, Item | list[Injection]]], total: int, limit: int, notes: Notes
) -> int:
    """Take the chat newest first while each message fits, up to the first that does not (the rest of
    the prompt, `total`, counted before it); drop the older ones. Returns the total with the chat kept."""
    history = arr.history
    first = len(chat)
    while first > 0 and total + chat[first - 1][0] <= limit:
        first -= 1
        total += chat[first][0]
    dropped = 0
    for _cost, piece in chat[:first]:
        if isinstance(piece, Item):
            dropped += 1
            continue
        for inj in piece:
            arr.injections.remove(inj)
            notes.omit(
                f"An in-chat {inj.role} message at depth {inj.depth}.",
                "Trimmed to fit the token budget (it sits before the oldest history message kept).",
                inj.source,
            )
    if dropped:
        arr.history = history = list(history[dropped:])  # maybe a kept walk's tuple: replaced
        notes.omit(
            f"The {dropped} oldest history message{'s' if dropped != 1 else ''}.",
            "Trimmed to fit the token budget.",
            native_source("DIALOGUE_HISTORY"),
        )
        if not history:
            notes.warn(
                "Not even the latest history message fits the token budget; SillyTavern sends no chat then."
            )
    return total


def _trim_samples(arr: Arrangement, samples: dict[int, int], total: int, limit: int, notes: Notes) -> int:
    """Add each sample dialogue block, in order, while the whole block fits in what the history left;
    drop the rest. Returns the total with the blocks kept."""
    kept: set[int] = set()
    for block in sorted(samples):
        if total + samples[block] > limit:
            break
        total += samples[block]
        kept.add(block)
    for block in sorted(set(samples) - kept):
        notes.omit(
            f"Sample dialogue {block + 1}.",
            "Trimmed to fit the token budget (sample dialogues get what the history leaves).",
            native_source("DIALOGUE_SAMPLE"),
        )
    if len(kept) < len(samples):
        for run in (arr.before, arr.after):
            run[:] = [i for i in run if not _is_sample(i) or i.group in kept]
    return total


def to_messages(
    items: list[Item],
    doc: BucketDocument,
    seed: int,
    history: tuple[int, int],
    names: int = 0,
    blank: list[Item] | None = None,
    reuse: tuple[Reuse, ...] = (),
    *,
    history_as_given: bool = False,
) -> tuple[Message, ...]:
    """The items as messages; `history_as_given` says the history's range holds the document's history
    items as they are (the squash compared them), whose messages are then the history run's."""
    ready, per_seed, kept = ready_messages(doc, seed, names)
    char = doc.char_name
    # what a message of an item depends on besides the item: the names (a group's too)
    who = (
        (doc.user_name, char, None, None, None)
        if type(char) is str  # not a group's speaker (engine.macros.identity.Speaker)
        else (
            doc.user_name,
            char,
            getattr(char, "group", None),
            getattr(char, "not_muted", None),
            getattr(char, "others", None),
        )
    )
    messages = _Finisher(
        doc=doc,
        seed=seed,
        ready=ready,
        per_seed=per_seed,
        kept=kept,
        reuse=reuse,
        who=who,
        named=reuse[-1].resolved_for(who) if reuse else None,
        blank=blank,
        spliced=reuse[-1].spliced_for(who) if reuse else None,
    )
    start, stop = history
    chat: Sequence[Message] = ()  # a prompt without a chat (a summariser's) has none to make
    if start < stop:
        run = history_run(doc, names)
        chat = (
            run.ordered
            if history_as_given
            else _history_messages(tuple(items[start:stop]), run, messages.finish)
        )
        # emptied messages counted for depth; never sent (docs/fidelity.md#the-deliberate-differences, item 4)
        if run.blank or not run.items:
            chat = [m for m in chat if not m.history or m.content.strip()]
    before = messages.finish_run(items[:start])
    return (*before, *chat, *messages.finish_run(items[stop:]))  # the long history copied once


class _Finisher:
    """Makes the messages of one assembly's runs of items, reusing what is known: the document's
    items have theirs already, the preset's items and runs seen before may have (`reuse`)."""

    __slots__ = (
        "blank",
        "doc",
        "kept",
        "named",
        "per_seed",
        "ready",
        "reuse",
        "seed",
        "seeded",
        "spliced",
        "who",
    )

    def __init__(
        self,
        *,
        doc: BucketDocument,
        seed: int,
        ready: dict[int, Message],
        per_seed: dict[int, Message],
        kept: set[int],
        reuse: tuple[Reuse, ...],
        who: tuple[Any, ...],
        named: Resolved | None,
        blank: list[Item] | None,
        spliced: dict[Any, Any] | None = None,
    ) -> None:
        self.doc, self.seed = doc, seed
        self.ready, self.per_seed, self.kept = ready, per_seed, kept
        self.reuse, self.who, self.named, self.blank = reuse, who, named, blank
        self.spliced = spliced
        self.seeded = False  # whether the last `finish` met an item that draws on the seed

    def finish(self, run: Sequence[Item]) -> list[Message]:
        """The run's messages: the document's items have theirs already, the preset's items and runs
        seen before may have (`reuse`); the others (the wrapped and the changed ones) are built here,
        and blank ones left out."""
        ready, per_seed, kept, reuse, who = self.ready, self.per_seed, self.kept, self.reuse, self.who
        out = []
        any_seeded = False
        for item in run:
            key = id(item)
            message = ready.get(key)  # held for any seed
            if message is None:
                message = per_seed.get(key)
                if message is not None:
                    any_seeded = True
            if message is None:
                for table in reuse:
                    known = table.messages.get(key)
                    if known is not None and known[0] is item and known[1] == who:
                        message = known[2]
                        break
            if message is None:
                message, seeded = _message(item, self.doc, self.seed, self.named, self.spliced)
                if message is None:
                    if self.blank is not None:
                        self.blank.append(item)
                    continue
                any_seeded = any_seeded or seeded
                if key in kept:  # a native item as the document gave it
                    (per_seed if seeded else ready)[key] = message
                elif not seeded:
                    for table in reuse:
                        if table.vouches(item):
                            table.message(item, who, message)
                            break
            out.append(message)
        self.seeded = any_seeded
        return out

    def finish_run(self, run: Sequence[Item]) -> list[Message]:
        """`finish(run)`, kept with the document for a run of the very same items (the document's and
        the preset's own, none blank, none drawing on the seed)."""
        reuse, who = self.reuse, self.who
        if not reuse or not run:
            return self.finish(run)
        table = reuse[-1]  # the document's: the run may hold its items
        key = tuple(map(id, run))
        found = table.runs.get(key)
        if found is not None and found[1] == who and all(map(operator.is_, found[0], run)):
            return list(found[2])
        made = self.finish(run)
        if (
            len(made) == len(run)  # none blank: every item's message was found or made, and
            and not self.seeded  # none draws on the seed (its message is then the seed's only)
            and all_vouched(reuse, run)
        ):
            table.keep_run(key, (tuple(run), who, tuple(made)))
        return made


_CHUNK = 32


def _history_messages(
    items: tuple[Item, ...], run: HistoryRun, finish: Callable[[Sequence[Item]], list[Message]]
) -> Sequence[Message]:
    """The history's messages, reusing those the document's history run made.

    The history usually holds the run's items in order (maybe without the oldest, trimmed, or the
    last, continued; a few changed by injections): runs of them are matched by slices, which
    compare item by item in C, and only a chunk that differs goes through `finish`."""
    known, messages = run.items, run.ordered
    if not known or not items:  # pre-built items (docs/assembly.md#the-bucket-document) have no history run
        return finish(items)
    if items == known:  # the whole history as the document gave it (compared item by item in C)
        return messages
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


Resolved = dict[int, tuple[Part, str | None]]  # a part's id: the part, its text with names (None: it draws)


def _resolved(part: Part, user: str, char: str, seed: int, known: Resolved | None) -> tuple[str, bool]:
    """A trusted part's text with its identity macros resolved, and whether that drew on the seed;
    `known` (the document's, per names) keeps the texts that do not draw, by part."""
    text = part.text
    if known is None:
        return resolve_identity(text, user=user, char=char, seed=seed), depends_on_seed(text)
    entry = known.get(id(part))
    if entry is not None and entry[0] is part:
        if entry[1] is not None:
            return entry[1], False
        return resolve_identity(text, user=user, char=char, seed=seed), True
    seeded = depends_on_seed(text)
    resolved = resolve_identity(text, user=user, char=char, seed=seed)
    if len(known) >= RESOLVED_LIMIT:
        known.clear()
    known[id(part)] = (part, None if seeded else resolved)
    return resolved, seeded


RESOLVED_LIMIT = 4096


def _message(
    item: Item,
    doc: BucketDocument,
    seed: int,
    known: Resolved | None = None,
    spliced: dict[Any, Any] | None = None,
) -> tuple[Message | None, bool]:
    """The item as a message (identity macros resolved in its trusted parts), None when it is blank;
    and whether a part drew on the seed (its message is then this seed's only). A long joined item is
    made from the last one like it in `spliced` (engine/assemble/spliced.py)."""
    user, char = doc.user_name, doc.char_name
    if spliced is not None and len(item.parts) >= MIN_PARTS:
        made = spliced_message(item, lambda part: _resolved(part, user, char, seed, known), spliced)
        if made is not None:
            return made
    if len(item.parts) == 1:  # most items: one part, one source
        part = item.parts[0]
        text, seeded = _resolved(part, user, char, seed, known) if part.trusted else (part.text, False)
        if not text.strip():
            return None, seeded
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
        ), seeded
    texts: list[str] = []
    sources: dict[Source, None] = {}
    pieces: list[tuple[Source, str]] = []
    transforms: tuple[Transform, ...] = ()
    originals: list[str] = []
    seeded = False
    for part in item.parts:  # one pass: squashed items have dozens of parts
        if part.trusted:
            text, drew = _resolved(part, user, char, seed, known)
            seeded = seeded or drew
        else:
            text = part.text
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
        return None, seeded
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
    ), seeded
