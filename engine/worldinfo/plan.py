"""Which entries a pass needs to look at: an index from key words to entries, built once per book set.

Most keys are single words tested as whole words; such an entry can only match when one of its key
words is among the scan text's words, so a pass looks up the text's words instead of testing every
entry. Entries the index cannot vouch for (phrases, regexes, CJK keys, their own scan depth or match
flags, whole words off, constants, decorators, timed effects) are always checked.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.worldinfo.compiled import CompiledBook, CompiledEntry, Key
from engine.worldinfo.gc_pause import paused_gc
from engine.worldinfo.scan import FLAG_TEXTS, Text
from engine.worldinfo.settings import WorldInfoSettings

# by (the books' ids, strategy, case sensitivity, whole words)
_PLANS: OrderedDict[tuple[tuple[int, ...], str, bool, bool], tuple[tuple[CompiledBook, ...], Plan]] = (
    OrderedDict()
)
_PLAN_LIMIT = 64
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Plan:
    """Entries in evaluation order, and how to find the ones a scan text can activate.

    Each indexed key has a signature that a matching text must show: a whole word (`words`), the
    first four letters of a word (`prefixes`), or one of its characters (`chars`).
    """

    entries: tuple[CompiledEntry, ...]
    always: frozenset[int]  # positions checked in every pass
    by_word: dict[str, tuple[int, ...]]  # lower-cased words
    by_exact_word: dict[str, tuple[int, ...]]  # case-sensitive entries' words
    by_prefix: dict[str, tuple[int, ...]]
    by_char: dict[str, tuple[int, ...]]
    position_of: dict[int, int]  # id(entry) → position
    levels: tuple[int, ...] = ()  # the entries' `delayUntilRecursion` levels, ascending

    def positions(self, text: Text, extra: set[int] | None = None) -> list[int]:
        """The positions (in evaluation order) worth checking against `text`, plus `extra`."""
        found = set(self.always)
        if extra:
            found |= extra
        for index, present in (
            (self.by_word, text.words_lowered),
            (self.by_exact_word, text.words if self.by_exact_word else None),
            (self.by_prefix, text.prefixes if self.by_prefix else None),
            (self.by_char, text.chars if self.by_char else None),
        ):
            if present is None:
                continue
            for sign in present & index.keys():
                found.update(index[sign])
        return sorted(found)


_RUN = re.compile(r"[A-Za-z0-9_]+")
PREFIX = 4


def key_signature(key: Key, *, case_sensitive: bool, whole_words: bool) -> tuple[str, str] | None:
    """What any text this key matches must contain, or None when there is no cheap necessary sign."""
    compiled = key.compiled
    if compiled is None or compiled.is_regex or not compiled.text:
        return None
    if key.word is not None and whole_words:
        return ("exact", key.word) if case_sensitive else ("word", key.word.lower())
    if case_sensitive:
        return None
    text = compiled.lowered
    runs = [(m.start(), m.end()) for m in _RUN.finditer(text)]
    # a run with a non-word character of the key on both sides is a whole word of the text
    interior = [text[a:b] for a, b in runs if a > 0 and b < len(text)]
    if interior:
        return "word", max(interior, key=len)
    # a run with a non-word character of the key before it starts a word of the text
    starting = [text[a:b] for a, b in runs if a > 0 and b - a >= PREFIX]
    if starting:
        return "prefix", max(starting, key=len)[:PREFIX]
    if any(ord(ch) > 127 for ch in text):
        return "char", max(text)
    return None


def _indexable(ce: CompiledEntry) -> bool:
    e = ce.entry
    if e.delay_until_recursion:
        return False  # checked again in full when its recursion level comes
    if e.constant or ce.decorators or e.sticky or e.scan_depth is not None:
        return False
    return not any(getattr(e, attr) for attr, _, _ in FLAG_TEXTS)


def build_plan(entries: Sequence[CompiledEntry], settings: WorldInfoSettings) -> Plan:
    """The index for `entries` (already in evaluation order) under `settings`' case and word rules."""
    always: set[int] = set()
    indexes: dict[str, dict[str, list[int]]] = {"word": {}, "exact": {}, "prefix": {}, "char": {}}
    for position, ce in enumerate(entries):
        if not ce.primary and _indexable(ce):
            continue  # no keys, not forced: it can never activate
        e = ce.entry
        case = e.case_sensitive if e.case_sensitive is not None else settings.case_sensitive
        whole = e.match_whole_words if e.match_whole_words is not None else settings.match_whole_words
        signs = [key_signature(k, case_sensitive=case, whole_words=whole) for k in ce.primary]
        known = [sign for sign in signs if sign is not None]
        if not _indexable(ce) or not signs or len(known) < len(signs):
            always.add(position)
            continue
        for kind, value in known:
            indexes[kind].setdefault(value, []).append(position)

    def frozen(kind: str) -> dict[str, tuple[int, ...]]:
        return {sign: tuple(dict.fromkeys(p)) for sign, p in indexes[kind].items()}

    return Plan(
        entries=tuple(entries),
        always=frozenset(always),
        by_word=frozen("word"),
        by_exact_word=frozen("exact"),
        by_prefix=frozen("prefix"),
        by_char=frozen("char"),
        position_of={id(ce): position for position, ce in enumerate(entries)},
        levels=tuple(
            sorted({ce.entry.delay_until_recursion for ce in entries if ce.entry.delay_until_recursion})
        ),
    )


def plan_for(
    books: Sequence[CompiledBook],
    settings: WorldInfoSettings,
    ordered: Callable[[], list[CompiledEntry]],
) -> Plan:
    """The plan for these (cached, compiled) books and settings; built once (from `ordered()`, the
    enabled entries in evaluation order), reused per request."""
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
    with paused_gc():
        plan = build_plan(ordered(), settings)
    with _lock:
        _PLANS[key] = (tuple(books), plan)
        while len(_PLANS) > _PLAN_LIMIT:
            _PLANS.popitem(last=False)
    return plan
