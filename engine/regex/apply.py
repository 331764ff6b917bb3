"""Where scripts run (docs/regex.md#where-they-run): the prompt's history and World Info entries, and reply
cleaning.

Every function takes the scripts already compiled (`CompiledScript`, in running order: the server's
own first, then the preset's) and a `RegexRequest` (the seed, names and variables macros read).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from engine.macros import MacroEnv, render_text, resolve_identity

from .budget import RegexBudget
from .find import parse_find_regex
from .js import JsRegex, RegexCompileError, Replacement, Run, compile_js_regex, replace_many
from .replacement import compile_replacement
from .scripts import CompiledScript, Placement, RegexScript, SubstituteRegex

DEFAULT_REASONING_PREFIX = "<think>"
DEFAULT_REASONING_SUFFIX = "</think>"
_MATCH_MACRO = re.compile(r"\{\{match\}\}", re.IGNORECASE)
_REGEX_SPECIAL = re.compile(r"[.*+?^${}()|\[\]\\/]")


@dataclass(frozen=True, slots=True)
class RegexRequest:
    """What macros in a script read: the request's seed, the names, the variables (read only)."""

    seed: int = 0
    user: str = "User"
    char: str = "Assistant"
    env: MacroEnv = field(default_factory=MacroEnv)
    variables: Mapping[str, Any] | None = None
    global_variables: Mapping[str, Any] | None = None
    # Shared by every regex step of the request (pass the same one to each RegexRequest of it).
    budget: RegexBudget = field(default_factory=RegexBudget, compare=False)

    def render(self, text: str) -> str:
        """`text` with the macros of docs/macros.md and the identity macros rendered; writes are dropped."""
        if "{" in text:
            text = render_text(
                text,
                env=self.env,
                seed=self.seed,
                variables=self.variables,
                global_variables=self.global_variables,
            ).text
        return resolve_identity(text, user=self.user, char=self.char, seed=self.seed)


class AppliedJson(TypedDict):
    script: str
    id: str
    where: str


class ScriptFailureJson(TypedDict):
    script: str
    error: str


class CleanedJson(TypedDict):
    """The clean answer (docs/bot.md), as `Cleaned.to_dict` writes it."""

    stored: str
    display: str
    reasoning: str | None
    applied: list[AppliedJson]
    errors: list[ScriptFailureJson]


@dataclass(frozen=True, slots=True)
class Applied:
    """A script that changed a text: `where` is "stored", "display", "reasoning", "prompt" or "world_info"."""

    script: str
    id: str
    where: str

    def to_dict(self) -> AppliedJson:
        return {"script": self.script, "id": self.id, "where": self.where}


@dataclass(frozen=True, slots=True)
class ScriptFailure:
    """A script that did not run: inactive, a pattern that failed once macros went in, or stopped."""

    script: str
    id: str
    error: str
    inactive: bool = False  # compile-time (shown at import and on the pages), not this run's failure

    def to_dict(self) -> ScriptFailureJson:
        return {"script": self.script, "error": self.error}


def transform_source(script: RegexScript) -> dict[str, str]:
    """The `{"kind": "regex", "script", "id"}` entry a changed part carries in its `transforms`."""
    return {"kind": "regex", "script": script.label, "id": script.id}


# --- preparing scripts for one request -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Ready:
    script: RegexScript
    regex: JsRegex
    replacement: Replacement | Callable[[], Replacement]


def _prepare(
    scripts: Sequence[CompiledScript],
    request: RegexRequest,
    keep: Callable[[RegexScript], bool],
    failures: list[ScriptFailure],
) -> list[_Ready]:
    """The scripts `keep` selects, with their macros rendered; the others that cannot run reported."""
    ready = []
    for compiled in scripts:
        script = compiled.script
        if script.disabled or not keep(script):
            continue
        if compiled.inactive is not None:
            failures.append(ScriptFailure(script.label, script.id, compiled.inactive, inactive=True))
            continue
        try:
            regex = compiled.regex or _regex_with_macros(script, request)
        except RegexCompileError as exc:
            failures.append(ScriptFailure(script.label, script.id, exc.message))
            continue
        ready.append(_Ready(script, regex, compiled.replacement or _RenderedLater(script, request)))
    return ready


class _RenderedLater:
    """The replacement with its macros rendered, built once, and only if the script matches."""

    __slots__ = ("built", "request", "script")

    def __init__(self, script: RegexScript, request: RegexRequest) -> None:
        self.script, self.request = script, request
        self.built: Replacement | None = None

    def __call__(self) -> Replacement:
        if self.built is None:
            script, request = self.script, self.request
            self.built = compile_replacement(
                request.render(_MATCH_MACRO.sub("$0", script.replace_string)),
                tuple(request.render(trim) for trim in script.trim_strings),
            )
        return self.built


def _regex_with_macros(script: RegexScript, request: RegexRequest) -> JsRegex:
    pattern, flags = parse_find_regex(script.find_regex)
    if script.substitute_regex == SubstituteRegex.ESCAPED:
        pattern = _render_escaped(pattern, request)
    else:
        pattern = request.render(pattern)
    return compile_js_regex(pattern, flags)


def _render_escaped(pattern: str, request: RegexRequest) -> str:
    # Render each macro on its own so only what the macros produced is escaped, never the pattern.
    out, pos = [], 0
    for found in re.finditer(r"\{\{.*?\}\}|<(?i:user|bot|char)>", pattern):
        out.append(pattern[pos : found.start()])
        out.append(_REGEX_SPECIAL.sub(lambda m: "\\" + m.group(0), request.render(found.group(0))))
        pos = found.end()
    out.append(pattern[pos:])
    return "".join(out)


def _run(
    texts: Sequence[str],
    ready: Sequence[_Ready],
    allows: Callable[[_Ready, int], bool],
    failures: list[ScriptFailure],
    budget: RegexBudget,
) -> tuple[list[str], dict[int, list[RegexScript]]]:
    """Each ready script over the texts it `allows`, in order, in one trip into the engine."""
    runs = [
        Run(item.regex, item.replacement, tuple(i for i in range(len(texts)) if allows(item, i)))
        for item in ready
    ]
    runs_used = [(item, run) for item, run in zip(ready, runs, strict=True) if run.targets]
    if not runs_used:
        return list(texts), {}
    result = replace_many(texts, [run for _, run in runs_used], budget)
    for index, error in result.failures.items():
        script = runs_used[index][0].script
        failures.append(ScriptFailure(script.label, script.id, error.message))
    changed = {
        text: [runs_used[run][0].script for run in run_indices]
        for text, run_indices in result.changed_by.items()
    }
    return result.texts, changed


# --- the prompt ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PromptResult:
    """Texts after the prompt scripts, which scripts changed each (by index), what could not run."""

    texts: list[str]
    changed_by: dict[int, list[RegexScript]]
    failures: list[ScriptFailure]


def apply_to_history(
    scripts: Sequence[CompiledScript],
    messages: Sequence[tuple[str, str]],
    request: RegexRequest,
) -> PromptResult:
    """promptOnly scripts on history messages `(role, text)`, oldest first: user messages take
    placement 1, assistant messages 2; depth 0 is the newest message."""
    failures: list[ScriptFailure] = []
    ready = _prepare(scripts, request, lambda s: s.prompt_only, failures)
    count = len(messages)
    placements = [Placement.USER_INPUT if role == "user" else Placement.AI_OUTPUT for role, _ in messages]

    def allows(item: _Ready, index: int) -> bool:
        script = item.script
        return placements[index] in script.placement and script.depth_allows(count - 1 - index)

    texts, changed = _run([text for _, text in messages], ready, allows, failures, request.budget)
    return PromptResult(texts, changed, failures)


def apply_to_entries(
    scripts: Sequence[CompiledScript],
    entries: Sequence[tuple[str, int | None]],
    request: RegexRequest,
) -> PromptResult:
    """promptOnly World Info scripts (placement 5) on activated entries `(text, depth)`; the depth is
    an @depth entry's injection depth, None for the others (no depth bound applies then)."""
    failures: list[ScriptFailure] = []
    ready = _prepare(
        scripts, request, lambda s: s.prompt_only and Placement.WORLD_INFO in s.placement, failures
    )

    def allows(item: _Ready, index: int) -> bool:
        return item.script.depth_allows(entries[index][1])

    texts, changed = _run([text for text, _ in entries], ready, allows, failures, request.budget)
    return PromptResult(texts, changed, failures)


# --- reply and user-message cleaning ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cleaned:
    """The answer of the reply-cleaning API and CLI (docs/regex.md#where-they-run)."""

    stored: str
    display: str
    reasoning: str | None
    applied: tuple[Applied, ...]
    errors: tuple[ScriptFailure, ...]

    def to_dict(self) -> CleanedJson:
        return {
            "stored": self.stored,
            "display": self.display,
            "reasoning": self.reasoning,
            "applied": [applied.to_dict() for applied in self.applied],
            "errors": [error.to_dict() for error in self.errors],
        }


def split_reasoning(
    reply: str, *, prefix: str = DEFAULT_REASONING_PREFIX, suffix: str = DEFAULT_REASONING_SUFFIX
) -> tuple[str, str | None]:
    """A reply that opens (after whitespace) with `prefix`…`suffix` → (the rest, the reasoning inside)."""
    if not prefix or not suffix:
        return reply, None
    start = len(reply) - len(reply.lstrip())
    if not reply.startswith(prefix, start):
        return reply, None
    end = reply.find(suffix, start + len(prefix))
    if end < 0:
        return reply, None
    reasoning = reply[start + len(prefix) : end].strip()
    return reply[end + len(suffix) :].lstrip(), reasoning


def clean_reply(
    scripts: Sequence[CompiledScript],
    reply: str,
    request: RegexRequest,
    *,
    reasoning: str | None = None,
    impersonate: bool = False,
    reasoning_prefix: str = DEFAULT_REASONING_PREFIX,
    reasoning_suffix: str = DEFAULT_REASONING_SUFFIX,
) -> Cleaned:
    """A model reply → what the bot keeps (`stored`), posts (`display`) and files as `reasoning`.

    The reasoning block is split off first; `stored` has the scripts with neither flag for AI output
    (user input when impersonating); `display` is `stored` after the markdownOnly ones (at depth 0);
    `reasoning` (the given text, then the split block) has the placement-6 scripts with neither flag.
    """
    body, split = split_reasoning(reply, prefix=reasoning_prefix, suffix=reasoning_suffix)
    parts = [text for text in (reasoning, split) if text]
    thinking = "\n\n".join(parts) if parts else None
    placement = Placement.USER_INPUT if impersonate else Placement.AI_OUTPUT
    failures: list[ScriptFailure] = []
    applied: list[Applied] = []

    stored = _clean_one(scripts, body, request, placement, _neither, None, "stored", applied, failures)
    display = _clean_one(scripts, stored, request, placement, _display, 0, "display", applied, failures)
    if thinking is not None:
        thinking = _clean_one(
            scripts, thinking, request, Placement.REASONING, _neither, None, "reasoning", applied, failures
        )
    return Cleaned(stored, display, thinking, tuple(applied), tuple(_unique(failures)))


def clean_user_message(scripts: Sequence[CompiledScript], message: str, request: RegexRequest) -> Cleaned:
    """A user message → `stored` (placement-1 scripts with neither flag); `display` is the same."""
    failures: list[ScriptFailure] = []
    applied: list[Applied] = []
    stored = _clean_one(
        scripts,
        message,
        request,
        Placement.USER_INPUT,
        _neither,
        None,
        "stored",
        applied,
        failures,
    )
    return Cleaned(stored, stored, None, tuple(applied), tuple(_unique(failures)))


def _clean_one(
    scripts: Sequence[CompiledScript],
    text: str,
    request: RegexRequest,
    placement: int,
    keep: Callable[[RegexScript], bool],
    depth: int | None,
    where: str,
    applied: list[Applied],
    failures: list[ScriptFailure],
) -> str:
    selected = [
        c
        for c in scripts
        if placement in c.script.placement and keep(c.script) and c.script.depth_allows(depth)
    ]
    ready = _prepare(selected, request, _always, failures)
    texts, changed = _run([text], ready, lambda _item, _index: True, failures, request.budget)
    applied.extend(Applied(script.label, script.id, where) for script in changed.get(0, ()))
    return texts[0]


def _neither(script: RegexScript) -> bool:
    return not script.markdown_only and not script.prompt_only


def _display(script: RegexScript) -> bool:
    return script.markdown_only


def _always(_script: RegexScript) -> bool:
    return True


def _unique(failures: list[ScriptFailure]) -> list[ScriptFailure]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for failure in failures:
        key = (failure.script, failure.id, failure.error)
        if key not in seen:
            seen.add(key)
            out.append(failure)
    return out
