"""Which entries a pass needs to look at: an index from key words to entries, built once per book set.

Most keys are single words tested as whole words; such an entry can only match when one of its key
words is among the scan text's words, so a pass looks up the text's words instead of testing every
entry. Entries the index cannot vouch for (phrases, regexes, CJK keys, their own scan depth or match
flags, whole words off, constants, decorators, timed effects) are always checked.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from engine.worldinfo.compiled import CompiledBook, CompiledEntry
from engine.worldinfo.scan import FLAG_TEXTS, Text
from engine.worldinfo.settings import WorldInfoSettings

_PLANS: OrderedDict[tuple, tuple[tuple[CompiledBook, ...], Plan]] = OrderedDict()
_PLAN_LIMIT = 64
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Plan:
    """Entries in evaluation order, and how to find the ones a scan text can activate."""

    entries: tuple[CompiledEntry, ...]
    always: frozenset[int]  # positions checked in every pass
    by_lowered_word: dict[str, tuple[int, ...]]
    by_exact_word: dict[str, tuple[int, ...]]
    position_of: dict[int, int]  # id(entry) → position

    def positions(self, text: Text, extra: set[int] | None = None) -> list[int]:
        """The positions (in evaluation order) worth checking against `text`, plus `extra`."""
        found = set(self.always)
        if extra:
            found |= extra
        index = self.by_lowered_word
        for word in text.words_lowered & index.keys():
            found.update(index[word])
        exact = self.by_exact_word
        if exact:
            for word in text.words & exact.keys():
                found.update(exact[word])
        return sorted(found)


def _indexable(ce: CompiledEntry, settings: WorldInfoSettings) -> bool:
    e = ce.entry
    if e.delay_until_recursion:
        return False  # checked again in full when its recursion level comes
    if e.constant or ce.decorators or e.sticky or e.scan_depth is not None or not ce.primary:
        return not ce.primary and not (e.constant or ce.decorators or e.sticky)  # keyless: never matches
    if any(getattr(e, attr) for attr, _, _ in FLAG_TEXTS):
        return False
    whole = e.match_whole_words if e.match_whole_words is not None else settings.match_whole_words
    return whole and all(key.word is not None for key in ce.primary)


def build_plan(entries: Sequence[CompiledEntry], settings: WorldInfoSettings) -> Plan:
    """The index for `entries` (already in evaluation order) under `settings`' case and word rules."""
    always: set[int] = set()
    lowered: dict[str, list[int]] = {}
    exact: dict[str, list[int]] = {}
    for position, ce in enumerate(entries):
        if not _indexable(ce, settings):
            always.add(position)
            continue
        case = ce.entry.case_sensitive if ce.entry.case_sensitive is not None else settings.case_sensitive
        for key in ce.primary:
            word = key.word or ""
            target, word = (exact, word) if case else (lowered, word.lower())
            target.setdefault(word, []).append(position)
    return Plan(
        entries=tuple(entries),
        always=frozenset(always),
        by_lowered_word={w: tuple(p) for w, p in lowered.items()},
        by_exact_word={w: tuple(p) for w, p in exact.items()},
        position_of={id(ce): position for position, ce in enumerate(entries)},
    )


def plan_for(
    books: Sequence[CompiledBook], settings: WorldInfoSettings, ordered: list[CompiledEntry]
) -> Plan:
    """The plan for these (cached, compiled) books and settings; built once, reused per request."""
    key = (
        tuple(id(b) for b in books),
        settings.strategy,
        settings.case_sensitive,
        settings.match_whole_words,
    )
    with _lock:
        hit = _PLANS.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], books, strict=True)):
            _PLANS.move_to_end(key)
            return hit[1]
    plan = build_plan(ordered, settings)
    with _lock:
        _PLANS[key] = (tuple(books), plan)
        while len(_PLANS) > _PLAN_LIMIT:
            _PLANS.popitem(last=False)
    return plan
