"""JavaScript regular expressions run in an embedded QuickJS (the `quickjs-ng` wheel).

One QuickJS context per Python thread (the runtime must not be shared across threads), created on
first use, holding every RegExp compiled in that thread: a pattern is compiled once per thread and
reused. Every call into the context is bounded by `RUN_LIMIT_SECONDS` of CPU time.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import quickjs

from ..errors import EngineError
from .budget import RegexBudget
from .literals import leads_with_wildcard, literal_prefix, required_literals

RUN_LIMIT_SECONDS = 0.05
_MEMORY_LIMIT = 256 * 1024 * 1024
_MAX_HANDLES = 20_000
_SOURCE = (Path(__file__).with_name("runtime.js")).read_text(encoding="utf-8")


class RegexError(EngineError):
    """Base of the regex engine's errors; `message` is one sentence for the user."""


class RegexCompileError(RegexError):
    """The JavaScript engine rejected the pattern or its flags."""


class RegexTimeout(RegexError):
    """A run went past the time bound and was stopped."""


class RegexBudgetSpent(RegexError):
    """The request's regex budget was spent before this run could start; it was skipped."""


class _Runtime:
    def __init__(self) -> None:
        self.context = quickjs.Context()
        self.context.set_memory_limit(_MEMORY_LIMIT)
        self.context.eval(_SOURCE)
        self.context.set_time_limit(RUN_LIMIT_SECONDS)
        self.handles: dict[tuple[str, str], int] = {}
        get = self.context.get
        self.compile = get("compile")
        self.group_count = get("groupCount")
        self.test = get("test")
        self.spans = get("spans")
        self.replace_json = get("replaceJson")
        self.replace_starts_json = get("replaceStartsJson")

    def handle(self, pattern: str, flags: str) -> int:
        key = (pattern, flags)
        found = self.handles.get(key)
        if found is None:
            found = _call(self.compile, pattern, flags, compiling=True)
            self.handles[key] = found
        return found


_local = threading.local()


def _runtime() -> _Runtime:
    runtime: _Runtime | None = getattr(_local, "runtime", None)
    if runtime is None or len(runtime.handles) >= _MAX_HANDLES:
        # A fresh context frees every RegExp of the old one; handles are looked up again lazily.
        runtime = _Runtime()
        _local.runtime = runtime
    return runtime


def _call(function: quickjs.Object, *args: object, compiling: bool = False) -> Any:
    """The JS function's answer, as QuickJS converts it (an int, str, bool, ...: the runtime's own)."""
    try:
        return function(*args)
    except quickjs.JSException as exc:
        raise _translate(exc, compiling=compiling) from None
    except (quickjs.StackOverflow, UnicodeError) as exc:
        raise RegexError(f"The regex engine could not run this pattern ({exc}).") from None


def _translate(exc: Exception, *, compiling: bool) -> RegexError:
    text = str(exc).split("\n", 1)[0].strip()
    if "interrupted" in text:
        limit = round(RUN_LIMIT_SECONDS * 1000)
        return RegexTimeout(f"Stopped after {limit} ms (the pattern backtracks too much on this text).")
    if compiling:
        return RegexCompileError(
            f"Not a valid JavaScript regular expression: {text.removeprefix('SyntaxError: ')}."
        )
    return RegexError(f"The regex engine failed: {text}.")


@dataclass(frozen=True, slots=True)
class JsRegex:
    """A compiled JavaScript RegExp. Picklable: only the pattern and flags travel."""

    pattern: str
    flags: str
    group_count: int = field(compare=False)
    # Literal text every match contains (literals.py), casefolded when `fold` (the `i` flag): a text
    # holding none of them cannot match, and is answered without entering the engine.
    literals: tuple[tuple[str, ...], ...] | None = field(default=None, compare=False, repr=False)
    fold: bool = field(default=False, compare=False, repr=False)
    # Match starts are tried only up to the last required literal (same result, no quadratic tail).
    bounded: bool = field(default=False, compare=False, repr=False)
    prefix: str = field(default="", compare=False, repr=False)  # every match starts with it

    def may_match(self, text: str, folded: str | None = None) -> bool:
        """False only when no match is possible; `folded` is `text.casefold()` if the caller has it."""
        if self.literals is None:
            return True
        haystack = (folded if folded is not None else text.casefold()) if self.fold else text
        return all(any(literal in haystack for literal in requirement) for requirement in self.literals)

    def search(self, text: str) -> bool:
        """Whether the pattern matches anywhere in `text` (`RegexTimeout` past the bound)."""
        if not self.may_match(text):
            return False
        runtime = _runtime()
        return bool(_call(runtime.test, runtime.handle(self.pattern, self.flags), text))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of every match with `g`, of the first without; Python string indices."""
        runtime = _runtime()
        raw = json.loads(str(_call(runtime.spans, runtime.handle(self.pattern, self.flags), text)))
        if not raw or all(ord(ch) < 0x10000 for ch in text):
            return [(start, end) for start, end in raw]
        index = _utf16_to_index(text)
        return [(index[start], index[end]) for start, end in raw]

    def replace(self, text: str, replacement: Replacement) -> str:
        """`text` with the match(es) replaced per `replacement` (`RegexTimeout` past the bound)."""
        if not self.may_match(text):
            return text
        return _replace(_runtime(), self, text, replacement)


def compile_js_regex(pattern: str, flags: str = "") -> JsRegex:
    """Compile once in this thread's engine; `RegexCompileError` when JavaScript rejects it."""
    runtime = _runtime()
    handle = runtime.handle(pattern, flags)
    groups = int(_call(runtime.group_count, handle))
    literals = required_literals(pattern, flags)
    fold = "i" in flags
    if literals is not None and fold:
        literals = tuple(tuple(literal.casefold() for literal in requirement) for requirement in literals)
    bounded = literals is not None and not fold and leads_with_wildcard(pattern)
    return JsRegex(pattern, flags, groups, literals, fold, bounded, literal_prefix(pattern, flags))


BOUNDED_FROM_LENGTH = 256  # shorter texts gain nothing from trying starts one by one


def _replace(runtime: _Runtime, regex: JsRegex, text: str, replacement: Replacement) -> str:
    handle = runtime.handle(regex.pattern, regex.flags)
    tokens, trims = replacement.tokens_json, replacement.trims_json
    bounded = regex.bounded and len(text) >= BOUNDED_FROM_LENGTH
    if bounded or regex.prefix:
        sticky = runtime.handle(regex.pattern, regex.flags.replace("g", "") + "y")
        requirements = json.dumps(regex.literals if bounded else [])
        return str(
            _call(
                runtime.replace_starts_json, handle, sticky, text, tokens, trims, requirements, regex.prefix
            )
        )
    return str(_call(runtime.replace_json, handle, text, tokens, trims))


def _utf16_to_index(text: str) -> list[int]:
    index: list[int] = []
    for position, ch in enumerate(text):
        index.append(position)
        if ord(ch) >= 0x10000:
            index.append(position)
    index.append(len(text))
    return index


Token = str | int | tuple[str]


@dataclass(frozen=True, slots=True)
class Replacement:
    """A replacement template split into literals and group references, plus the trim strings."""

    tokens: tuple[Token, ...]
    trims: tuple[str, ...] = ()
    tokens_json: str = field(init=False, compare=False, repr=False)
    trims_json: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        encoded = [list(token) if isinstance(token, tuple) else token for token in self.tokens]
        object.__setattr__(self, "tokens_json", json.dumps(encoded))
        object.__setattr__(self, "trims_json", json.dumps([trim for trim in self.trims if trim]))


@dataclass(frozen=True, slots=True)
class Run:
    """One script's regex and replacement over some of a batch's texts (their indices)."""

    regex: JsRegex
    replacement: Replacement | Callable[[], Replacement]  # a callable is built on the first match
    targets: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class BatchResult:
    texts: list[str]
    changed_by: dict[int, list[int]]  # text index → indices of the runs that changed it, in order
    failures: dict[int, RegexError]  # run index → why it stopped (it changed nothing after that)


def replace_many(texts: Sequence[str], runs: Sequence[Run], budget: RegexBudget | None = None) -> BatchResult:
    """Apply `runs` in order, each to its target texts; each run on one text is bounded on its own.

    A text that cannot match (see `JsRegex.may_match`) never enters the engine. A lazy replacement
    (a callable) is built only once its run matches a text. A run stopped by the bound leaves that
    text as it was and is skipped for the rest of the batch (it would stall the request again on
    the next text); it is reported. With a `budget`, the CPU time spent here is charged to it, and
    once it is spent every remaining run is skipped and reported (`RegexBudgetSpent`).
    """
    started = time.thread_time()
    try:
        return _replace_many(texts, runs, budget)
    finally:
        if budget is not None:
            budget.charge(started)


class _Spent:
    """Whether a budget is spent, reading the thread's CPU clock only when it could be.

    The thread's CPU clock is a system call each time (about 1 µs here, and a request's scripts
    may look at it 400 times); the wall clock is not, and this thread cannot have used more CPU
    time than has passed. So the CPU clock is read only once the wall clock says the limit may
    have been reached: the same answer, the same moment, without the calls."""

    __slots__ = ("budget", "cpu_begun", "left", "wall_begun")

    def __init__(self, budget: RegexBudget) -> None:
        self.budget = budget
        self.cpu_begun, self.wall_begun = time.thread_time(), time.perf_counter()
        self.left = budget.limit_ms / 1000 - budget.spent

    def __call__(self) -> bool:
        if time.perf_counter() - self.wall_begun < self.left:
            return False
        return time.thread_time() - self.cpu_begun >= self.left


def _replace_many(texts: Sequence[str], runs: Sequence[Run], budget: RegexBudget | None) -> BatchResult:
    runtime = _runtime()
    spent = _Spent(budget) if budget is not None else None
    out = list(texts)
    folded: dict[int, str] = {}
    changed: dict[int, list[int]] = {}
    failures: dict[int, RegexError] = {}
    for run_index, run in enumerate(runs):
        if spent is not None and spent():
            failures[run_index] = RegexBudgetSpent(spent.budget.skipped_message())
            continue
        regex = run.regex
        handle = runtime.handle(regex.pattern, regex.flags)
        replacement = None if callable(run.replacement) else run.replacement
        for index in run.targets:
            if spent is not None and spent():
                failures[run_index] = RegexBudgetSpent(spent.budget.skipped_message())
                break
            text = out[index]
            if regex.literals is not None:
                fold = folded.get(index) if regex.fold else None
                if regex.fold and fold is None:
                    fold = folded[index] = text.casefold()
                if not regex.may_match(text, fold):
                    continue
            try:
                if replacement is None:
                    if not _call(runtime.test, handle, text):
                        continue
                    replacement = run.replacement() if callable(run.replacement) else run.replacement
                after = _replace(runtime, regex, text, replacement)
            except RegexError as error:
                failures[run_index] = error
                break
            if after != text:
                out[index] = after
                folded.pop(index, None)
                changed.setdefault(index, []).append(run_index)
    return BatchResult(out, changed, failures)
