"""docs/worldinfo.md#timed-effects: the timed state a sample conversation reaches, by replaying its messages.

World Info runs once per message, in order: after message k the chat is k messages long and the
history scanned is the first k messages; each step starts from the state the previous one left,
the first from an empty state. The result is the state the next assembly (the one at message k + 1)
reads. The compiled books are reused for every step (their key index is built once).

With a `cache_key` the state after each step is kept (per process, bounded) under the messages so
far, so previewing a later message, or a conversation that grew, only runs the new steps.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from typing import Any

from engine.worldinfo.activate import ActivationRequest, activate
from engine.worldinfo.compiled import CompiledBook

# A step's key: what the step reads besides the history, and a digest of the messages up to it.
StepKey = tuple[tuple[Any, ...], bytes]

_STATES: OrderedDict[StepKey, tuple[tuple[CompiledBook, ...], dict[str, Any]]] = OrderedDict()
_STATE_LIMIT = 20_000  # step states (each a few small records)
_lock = threading.Lock()


def has_timed_entries(request: ActivationRequest) -> bool:
    """Whether any enabled entry of the books keeps a timer (sticky or cooldown); without one every
    replay ends with an empty state."""
    return any(
        (ce.entry.sticky or ce.entry.cooldown) and not ce.entry.disable
        for book in request.books
        for ce in book.entries
    )


def replay_state(
    request: ActivationRequest,
    *,
    steps: int,
    count_tokens: Callable[[str], int],
    cache_key: Hashable | None = None,
) -> dict[str, Any]:
    """The timed state after activating World Info for the first `steps` messages of
    `request.texts.history`, one message at a time (chat length 1, 2, … `steps`).

    `request` gives everything else each step uses (books, settings, names, seed, budget); its own
    `state` and `chat_length` are ignored. At most `len(history)` steps run. `cache_key` names the
    token counter (e.g. its encoding) and turns on the step cache.
    """
    history = request.texts.history
    steps = max(0, min(steps, len(history)))
    if not steps or not has_timed_entries(request):
        return {}
    keys = _step_keys(request, steps, cache_key) if cache_key is not None else None
    state: dict[str, Any] = {}
    done = 0
    if keys is not None:
        done, state = _longest_cached(keys, request.books)
    for length in range(done + 1, steps + 1):
        step = replace(
            request,
            texts=replace(request.texts, history=history[:length]),
            chat_length=length,
            state=state,
        )
        state = activate(step, count_tokens=count_tokens).state
        if keys is not None:
            _remember(keys[length - 1], request.books, state)
    return _copy(state)


def _step_keys(request: ActivationRequest, steps: int, cache_key: Hashable) -> list[StepKey]:
    """One key per step: everything a step reads besides the history, and a digest of the messages
    up to it."""
    texts = request.texts
    context = (
        tuple(id(book) for book in request.books),
        request.settings,
        tuple(sorted(request.names.items())),
        request.generation_type,
        request.seed,
        request.budget_context,
        request.char_tags,
        (
            texts.user_persona,
            texts.persona_prompt,
            texts.personality,
            texts.scenario,
            texts.depth_prompt,
            texts.creator_notes,
        ),
        cache_key,
    )
    digest = hashlib.blake2b(digest_size=16)
    keys: list[StepKey] = []
    for message in texts.history[:steps]:
        digest.update(f"{len(message.name)}:{message.name}{len(message.text)}:{message.text}".encode())
        keys.append((context, digest.digest()))
    return keys


def _longest_cached(keys: list[StepKey], books: Sequence[CompiledBook]) -> tuple[int, dict[str, Any]]:
    with _lock:
        for length in range(len(keys), 0, -1):
            hit = _STATES.get(keys[length - 1])
            if hit is not None and _same(hit[0], books):
                _STATES.move_to_end(keys[length - 1])
                return length, _copy(hit[1])
    return 0, {}


def _same(kept: tuple[CompiledBook, ...], books: Sequence[CompiledBook]) -> bool:
    """The kept books are these very objects (an id alone may be reused after a book is dropped)."""
    return len(kept) == len(books) and all(a is b for a, b in zip(kept, books, strict=True))


def _remember(key: StepKey, books: Sequence[CompiledBook], state: dict[str, Any]) -> None:
    with _lock:
        _STATES[key] = (tuple(books), _copy(state))
        while len(_STATES) > _STATE_LIMIT:
            _STATES.popitem(last=False)


def _copy(state: dict[str, Any]) -> dict[str, Any]:
    return {key: dict(record) for key, record in state.items()}
