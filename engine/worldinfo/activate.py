"""docs/worldinfo.md#activation: which entries activate for one assembly, in passes, and why
(docs/worldinfo.md#the-explanation).

Pure: compiled books, the scan texts, settings, a seed, the timed state and a token counter in; the
activated entries (with their rendered text), the skipped ones with reasons and the new state out.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.vocabulary import ROLES
from engine.worldinfo.compiled import CompiledBook, CompiledEntry, Key
from engine.worldinfo.model import POSITIONS
from engine.worldinfo.plan import plan_for
from engine.worldinfo.scan import Scanner, ScanTexts, Text
from engine.worldinfo.settings import WorldInfoSettings
from engine.worldinfo.timed import TimedState

INITIAL, RECURSION, MIN_ACTIVATIONS = "initial", "recursion", "min_activations"
# SillyTavern 1.18 counts World Info text as one system message (docs/worldinfo.md): its server adds 3
# tokens per message, 1 for the role and 3 of reply priming, and its client starts the sum at -1, so an
# entry costs its text's tokens + 6.
MESSAGE_OVERHEAD = 6


@dataclass(frozen=True, slots=True)
class Activated:
    """An entry that made it into the prompt, with its rendered text and why it activated."""

    entry: CompiledEntry
    content: str
    reason: str
    pass_number: int

    def to_dict(self) -> dict[str, Any]:
        """The explanation record of docs/worldinfo.md#the-explanation."""
        e = self.entry.entry
        out: dict[str, Any] = {
            "book": self.entry.book,
            "uid": e.uid,
            "comment": e.comment,
            "position": e.position,
            "position_name": POSITIONS[e.position],
            "order": e.order,
            "pass": self.pass_number,
            "reason": self.reason,
        }
        if e.position == 4:
            out["depth"] = e.depth
            out["role"] = ROLES[e.role or 0]
        if e.position == 7:
            out["outlet"] = e.outlet_name
        return out


@dataclass(frozen=True, slots=True)
class Skipped:
    """An entry that matched or was forced but did not make it, and why."""

    entry: CompiledEntry
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The explanation record of docs/worldinfo.md#the-explanation."""
        return {
            "book": self.entry.book,
            "uid": self.entry.entry.uid,
            "comment": self.entry.entry.comment,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class Activation:
    """Everything one World Info evaluation decided."""

    activated: tuple[Activated, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    tokens: int = 0
    budget: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    passes: int = 0
    # where SillyTavern 1.18 would send something else, deliberately (docs/fidelity.md)
    sillytavern_differences: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The `world_info` object of the assembly output (docs/worldinfo.md#the-explanation)."""
        return {
            "activated": [a.to_dict() for a in self.activated],
            "skipped": [s.to_dict() for s in self.skipped],
            "tokens": self.tokens,
            "budget": self.budget,
            "state": self.state,
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True, slots=True)
class ActivationRequest:
    """The per-request inputs of World Info activation."""

    books: Sequence[CompiledBook]
    texts: ScanTexts
    settings: WorldInfoSettings = field(default_factory=WorldInfoSettings)
    names: dict[str, str] = field(default_factory=dict)
    chat_length: int = 0
    generation_type: str = "normal"
    seed: int = 0
    state: Any = None
    budget_context: int | None = None
    char_tags: tuple[str, ...] = ()


@dataclass(slots=True)
class _Candidate:
    entry: CompiledEntry
    reason: str
    sticky: bool
    text: Text | None = None


def _may_occur(ce: CompiledEntry, added: Text, whole_words: bool) -> bool:
    """False when no primary key of `ce` (all plain) can occur in `added`: a one-word key matched as a
    whole word is not among its words, any other key is not even a lower-cased substring."""
    for key in ce.primary:
        if key.word_lowered is not None and whole_words:
            if key.word_lowered in added.words_lowered:
                return True
        elif key.compiled is not None and key.compiled.lowered in added.hay.lowered:
            return True
    return False


def order_entries(books: Sequence[CompiledBook], strategy: str) -> list[CompiledEntry]:
    """Entries in evaluation order: by book kind per the strategy, each by `order` descending."""

    def by_order(entries: list[CompiledEntry]) -> list[CompiledEntry]:
        return sorted(entries, key=lambda ce: -ce.entry.order)

    character = [ce for b in books if b.is_character for ce in b.entries]
    world = [ce for b in books if not b.is_character for ce in b.entries]
    if strategy == "evenly":
        return by_order(character + world)
    if strategy == "global_first":
        return by_order(world) + by_order(character)
    return by_order(character) + by_order(world)


def activate(
    request: ActivationRequest,
    *,
    count_tokens: Callable[[str], int],
    render: Callable[[CompiledEntry], str] | None = None,
) -> Activation:
    """The entries that activate for this request (docs/worldinfo.md#activation), with reasons and the new
    timed state."""
    return _Run(request, count_tokens, render or (lambda ce: ce.text)).run()


def _key(ce: CompiledEntry) -> tuple[str, int]:
    """An entry as SillyTavern 1.18 tells activated entries apart: its book and uid (Entry.st_uid)."""
    return (ce.book, ce.entry.st_uid)


class _Run:
    def __init__(
        self,
        request: ActivationRequest,
        count_tokens: Callable[[str], int],
        render: Callable[[CompiledEntry], str],
    ) -> None:
        self.request = request
        self.settings = request.settings
        self.count_tokens = count_tokens
        self.render = render
        self.plan = plan_for(
            request.books,
            self.settings,
            lambda: [
                ce for ce in order_entries(request.books, self.settings.strategy) if not ce.entry.disable
            ],
        )
        self.entries = self.plan.entries
        self.scanner = Scanner(request.texts, self.settings, dict(request.names))
        self.timed = TimedState(request.state, request.chat_length)
        self.budget = self.settings.budget_tokens(request.budget_context)
        # by (book, uid as SillyTavern knows it): entries sharing a uid take one place (`_budget`)
        self.activated: dict[tuple[str, int], Activated] = {}
        self.failed: set[int] = set()
        self.skipped: dict[int, Skipped] = {}
        self.group_winners: set[str] = set()
        self.tokens = 0
        self.differences: list[str] = []
        self.activated_text = ""
        self.overflowed = False
        # SillyTavern starts at the first `delayUntilRecursion` level (reached by ordinary recursion)
        # and moves to the next one each time a scan would otherwise end
        self.levels = list(self.plan.levels)
        self.level = self.levels.pop(0) if self.levels else 0
        self.scan_state = INITIAL
        self.missed: set[int] = set()  # entries whose keys found nothing in the text at `missed_skew`
        self.missed_skew = -1
        self.recheck: set[int] = set()  # positions to check in full again next pass

    # --- the passes -----------------------------------------------------------------------------

    def run(self) -> Activation:
        state: str | None = INITIAL
        pass_number = 0
        while state:
            pass_number += 1
            if self.settings.max_recursion and pass_number > self.settings.max_recursion:
                break
            self.scanner.new_pass()
            self.scan_state = state
            new = self._pass(state, pass_number)
            state = self._next_state(new)
            recursing = "\n".join(a.content for a in new if not a.entry.entry.prevent_recursion)
            if state and recursing:  # what SillyTavern counts of the earlier passes in the budget
                self.activated_text = recursing + "\n" + self.activated_text
        activated = tuple(self.activated.values())
        sent = {id(a.entry) for a in activated}
        for item in activated:
            self.timed.activated(item.entry)
        warnings = tuple(
            f"A regular-expression key was stopped by its time limit: {t}." for t in self.scanner.timeouts
        )
        return Activation(
            activated=activated,
            skipped=tuple(s for k, s in self.skipped.items() if k not in sent),
            tokens=self.tokens,
            budget=self.budget,
            state=self.timed.to_json(),
            warnings=tuple(dict.fromkeys(warnings)),
            passes=pass_number,
            sillytavern_differences=tuple(dict.fromkeys(self.differences)),
        )

    def _next_state(self, new: list[Activated]) -> str | None:
        """The next pass, decided as SillyTavern 1.18 decides it (docs/worldinfo.md)."""
        recursive = self.settings.recursive and not self.overflowed
        if recursive and any(not a.entry.entry.prevent_recursion for a in new):
            return RECURSION
        if recursive and self.scan_state == MIN_ACTIVATIONS and self.scanner.recursion:
            return RECURSION  # a widened scan is followed by a recursion pass over the buffer so far
        minimum = self.settings.min_activations
        if minimum and not self.overflowed and len(self.activated) < minimum:
            depth = self.settings.scan_depth + self.scanner.skew
            cap = self.settings.min_activations_depth_max
            if (not cap or depth <= cap) and depth <= len(self.request.texts.history):
                self.scanner.skew += 1
                return MIN_ACTIVATIONS
        if self.levels:  # even past the budget: only entries that ignore it can still come in
            self.level = self.levels.pop(0)
            return RECURSION
        return None

    def _pass(self, state: str, pass_number: int) -> list[Activated]:
        recursion = state == RECURSION
        # A recursion pass at the same depth only adds text: an entry whose keys found nothing before
        # can only match in the added text (keys never span the newline between pieces).
        incremental = recursion and self.missed_skew == self.scanner.skew
        if incremental:
            positions = self.plan.positions(self.scanner.added_text(), extra=self.recheck)
        else:
            positions = self.plan.positions(self.scanner.default_text(recursion=recursion))
            self.missed.clear()
            self.missed_skew = self.scanner.skew
        self.recheck = set()
        candidates: list[_Candidate] = []
        added = self.scanner.added_text()
        for position in positions:
            ce = self.entries[position]
            if _key(ce) in self.activated or id(ce) in self.failed:
                continue
            if incremental and id(ce) in self.missed and not _may_occur(ce, added, self.scanner.rules(ce)[1]):
                continue
            candidate = self._check(
                ce,
                recursion=recursion,
                first=pass_number == 1,
                added_only=incremental and id(ce) in self.missed,
            )
            if candidate is not None:
                candidates.append(candidate)
        candidates.sort(key=lambda c: not c.sticky)  # stable: sticky first, then evaluation order
        candidates = self._groups(candidates, recursion=recursion)
        candidates = self._probability(candidates)
        new = self._budget(candidates, pass_number)
        # SillyTavern adds one piece per pass: the texts of its new entries joined with newlines
        recursing = [a for a in new if not a.entry.entry.prevent_recursion]
        if "".join(a.content for a in recursing):
            for k, a in enumerate(recursing):
                self.scanner.add_recursion(a.entry, a.content, first=k == 0)
        return new

    # --- one entry ------------------------------------------------------------------------------

    def _check(
        self, ce: CompiledEntry, *, recursion: bool, first: bool, added_only: bool = False
    ) -> _Candidate | None:
        e = ce.entry
        status = self.timed.status(ce)
        gate = self._gate(ce, status.sticky, status.cooldown_until)
        if gate is not None:
            if first and self._would_activate(ce):
                self._skip(ce, gate)
            return None
        if (
            e.delay_until_recursion
            and not status.sticky
            and (not recursion or e.delay_until_recursion > self.level)
        ):
            return None
        if e.exclude_recursion and recursion and self.settings.recursive and not status.sticky:
            return None
        if "@@activate" in ce.decorators:  # before @@dont_activate, as SillyTavern 1.18 checks them
            return _Candidate(ce, "decorator", status.sticky)
        if "@@dont_activate" in ce.decorators:
            if first and self._would_activate(ce):
                self._skip(ce, "decorator @@dont_activate")
            return None
        if e.constant:
            return _Candidate(ce, "constant", status.sticky)
        if status.sticky:
            return _Candidate(ce, "sticky", True)
        if not ce.primary:
            return None
        text = self.scanner.text_for(ce, recursion=recursion)
        if added_only and not text.hay.raw:
            return None  # a scan depth of 0 scans nothing, the recursion text neither
        key = self._primary_match(ce, self.scanner.added_text() if added_only else text)
        if key is None:
            if ce.plain_keys:
                self.missed.add(id(ce))
            return None
        if not self._secondary_ok(ce, text):
            self.recheck.add(self.plan.position_of[id(ce)])  # more text may satisfy it later
            self.missed.discard(id(ce))
            return None
        where = self.scanner.where(ce, key, recursion=recursion)
        return _Candidate(ce, f'key "{key.source.strip()}" {where}', False, text)

    def _gate(self, ce: CompiledEntry, sticky: bool, cooldown_until: int | None) -> str | None:
        e = ce.entry
        if e.triggers and self.request.generation_type not in e.triggers:
            return "trigger"
        flt = e.character_filter
        if flt.active:
            char = self.request.names.get("char", "")
            hit = char in flt.names or any(tag in self.request.char_tags for tag in flt.tags)
            if hit == flt.is_exclude:
                return "filter"
        if e.delay and self.request.chat_length < e.delay:
            return "delay"
        if cooldown_until is not None and not sticky:
            return f"cooldown until message {cooldown_until}"
        return None

    def _would_activate(self, ce: CompiledEntry) -> bool:
        if ce.entry.constant or "@@activate" in ce.decorators:
            return True
        if not ce.primary:
            return False
        text = self.scanner.text_for(ce, recursion=False)
        return self._primary_match(ce, text) is not None and self._secondary_ok(ce, text)

    def _primary_match(self, ce: CompiledEntry, text: Text) -> Key | None:
        rules = self.scanner.rules(ce)
        for key in ce.primary:
            if self.scanner.matches(ce, key, text, rules):
                return key
        return None

    def _secondary_ok(self, ce: CompiledEntry, text: Text) -> bool:
        e = ce.entry
        if not e.selective or not ce.secondary:
            return True
        logic = e.selective_logic
        if logic == 0:  # AND ANY
            return any(self.scanner.matches(ce, k, text) for k in ce.secondary)
        if logic == 3:  # AND ALL
            return all(self.scanner.matches(ce, k, text) for k in ce.secondary)
        every = all(self.scanner.matches(ce, k, text) for k in ce.secondary)
        if logic == 1:  # NOT ALL
            return not every
        return not any(self.scanner.matches(ce, k, text) for k in ce.secondary)  # NOT ANY

    def _score(self, candidate: _Candidate) -> int:
        ce, text = candidate.entry, candidate.text
        if text is None:
            return 0
        primary = sum(1 for k in ce.primary if self.scanner.matches(ce, k, text))
        secondary = sum(1 for k in ce.secondary if self.scanner.matches(ce, k, text))
        if ce.entry.selective_logic == 0:
            return primary + secondary
        if ce.entry.selective_logic == 3 and secondary == len(ce.secondary):
            return primary + secondary
        return primary

    def _skip(self, ce: CompiledEntry, reason: str) -> None:
        self.skipped.setdefault(id(ce), Skipped(ce, reason))

    # --- inclusion groups, probability, budget -------------------------------------------------

    def _groups(self, candidates: list[_Candidate], *, recursion: bool) -> list[_Candidate]:
        labels = list(dict.fromkeys(label for c in candidates for label in c.entry.groups))
        losers: set[int] = set()
        for label in labels:
            members = [c for c in candidates if label in c.entry.groups and id(c.entry) not in losers]
            if not members:
                continue
            if label in self.group_winners:
                for c in members:
                    losers.add(id(c.entry))
                    self._skip(c.entry, f'group "{label}" already has an entry from an earlier pass')
                continue
            kept = members
            if any(c.sticky for c in kept):
                kept = [c for c in kept if c.sticky]
            scoring = [c for c in kept if self._uses_scoring(c.entry)]
            if scoring and len(kept) > 1:
                scores = {id(c.entry): self._score(c) for c in kept}
                best = max(scores.values())
                kept = [c for c in kept if scores[id(c.entry)] == best or not self._uses_scoring(c.entry)]
            winner = self._group_winner(label, kept)
            for c in members:
                if c is not winner:
                    losers.add(id(c.entry))
                    self._skip(c.entry, f"group lost to uid {winner.entry.uid}")
                    if any(other in labels[labels.index(label) + 1 :] for other in c.entry.groups):
                        self.differences.append(
                            f"World Info uid {c.entry.entry.uid} lost in its inclusion group “{label}” and "
                            "is not considered in its other groups; SillyTavern 1.18 removes it a second "
                            "time and drops another candidate instead."
                        )
            self.group_winners.add(label)
        return [c for c in candidates if id(c.entry) not in losers]

    def _uses_scoring(self, ce: CompiledEntry) -> bool:
        own = ce.entry.use_group_scoring
        return own if own is not None else self.settings.group_scoring

    def _group_winner(self, label: str, kept: list[_Candidate]) -> _Candidate:
        if len(kept) == 1:
            return kept[0]
        overrides = [c for c in kept if c.entry.entry.group_override]
        if overrides:
            return max(overrides, key=lambda c: c.entry.entry.order)  # max keeps the first on ties
        weights = [max(c.entry.entry.group_weight, 0) for c in kept]
        rng = random.Random(f"{self.request.seed}\x1fgroup\x1f{label}")
        if sum(weights) <= 0:
            return kept[0]
        return rng.choices(kept, weights=weights)[0]

    def _probability(self, candidates: list[_Candidate]) -> list[_Candidate]:
        kept = []
        for c in candidates:
            e = c.entry.entry
            if e.use_probability and e.probability < 100 and not c.sticky:
                roll = random.Random(f"{self.request.seed}\x1f{c.entry.book}\x1f{e.uid}").random() * 100
                if roll > e.probability:
                    self.failed.add(id(c.entry))
                    self._skip(c.entry, f"probability {e.probability} %")
                    continue
            kept.append(c)
        return kept

    def _cost(self, text: str) -> int:
        """Tokens as SillyTavern 1.18 counts World Info: the text as one system message (its tokens
        + MESSAGE_OVERHEAD), nothing for no text."""
        return self.count_tokens(text) + MESSAGE_OVERHEAD if text else 0

    def _budget(self, candidates: list[_Candidate], pass_number: int) -> list[Activated]:
        """SillyTavern's budget check (docs/worldinfo.md): the text earlier passes added to the scan,
        plus this pass's entries so far (each followed by a newline, the one that overflows too),
        counted as one message each, must stay under the budget."""
        new: list[Activated] = []
        earlier = self._cost(self.activated_text)
        content_so_far = ""
        for c in candidates:
            ignore = c.entry.entry.ignore_budget
            if self.overflowed and not ignore:
                self._skip(c.entry, "budget")
                continue
            content = self.render(c.entry)
            content_so_far += content + "\n"
            used = earlier + self._cost(content_so_far)
            if used >= self.budget and not ignore:
                self.overflowed = True
                self._skip(c.entry, "budget")
                continue
            self.tokens = max(self.tokens, used)
            item = Activated(c.entry, content, c.reason, pass_number)
            # SillyTavern 1.18 keeps activated entries in a Map keyed by book and uid (world-info.js):
            # an entry sharing its uid with one activated in the same pass takes that one's place
            key = _key(c.entry)
            replaced = self.activated.get(key)
            if replaced is not None:
                self._skip(replaced.entry, f"shares uid {key[1]} with a later entry, sent in its place")
            self.activated[key] = item
            new.append(item)
        return new
