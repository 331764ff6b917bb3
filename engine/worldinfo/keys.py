"""Keys compiled once per book version (SPEC §7.4), then tested against each request's scan text.

A plain key is a lower-cased substring test (a whole-word check only runs once the substring is
found); a `/pattern/flags` key is a JavaScript regular expression run by `engine.regex` with a time
bound. Until that engine is available a regex key cannot be evaluated: it never matches and is
reported as unsupported, so it is never silently matched with Python's different semantics.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_REGEX_KEY = re.compile(r"\A/([\s\S]+?)/([gimsuy]*)\Z")
_UNESCAPED_SLASH = re.compile(r"(?:^|[^\\])/")
_WORD = "A-Za-z0-9_"  # JavaScript's \w


def parse_regex_key(key: str) -> tuple[str, str] | None:
    """(pattern, flags) when `key` is written `/pattern/flags` as SillyTavern reads it, else None."""
    match = _REGEX_KEY.match(key)
    if not match:
        return None
    pattern, flags = match.group(1), match.group(2)
    if _UNESCAPED_SLASH.search(pattern):
        return None
    return pattern, flags


RegexTester = Callable[[str], bool | None]  # True/False, or None when the run was stopped (time bound)


def _js_regex_engine() -> Any | None:
    try:
        import engine.regex as js  # the shared JavaScript regex engine (SPEC §9.1), when present
    except ImportError:
        return None
    return js if hasattr(js, "compile_js_regex") else None


def compile_regex_key(pattern: str, flags: str) -> tuple[RegexTester | None, str]:
    """(tester, problem): a tester for the JavaScript regex, or None and why it cannot be used."""
    js = _js_regex_engine()
    if js is None:
        return None, "regular-expression keys need the JavaScript regex engine, which is not installed"
    try:
        compiled = js.compile_js_regex(pattern, flags.replace("g", "").replace("y", ""))
    except Exception as exc:  # the engine's own error: the pattern is not valid JavaScript
        return None, f"does not compile ({exc})"

    def test(text: str) -> bool | None:
        try:
            return bool(compiled.search(text))
        except Exception:  # stopped by the engine's time bound
            return None

    return test, ""


@dataclass(frozen=True, slots=True)
class CompiledKey:
    """One key ready to test; `text` is the key as written (after identity substitution)."""

    text: str
    lowered: str
    whole_word: re.Pattern[str] | None  # set when the key has no whitespace
    whole_word_lowered: re.Pattern[str] | None
    regex: RegexTester | None
    is_regex: bool
    problem: str = ""  # why a regex key cannot be evaluated (reported, never matched)


def compile_key(text: str) -> CompiledKey:
    """The key `text` compiled: a JavaScript regex when written `/…/flags` and usable, else plain."""
    parsed = parse_regex_key(text)
    if parsed is not None:
        tester, problem = compile_regex_key(*parsed)
        if tester is not None:
            return CompiledKey(text, text.lower(), None, None, tester, True)
        if "does not compile" not in problem:
            return CompiledKey(text, text.lower(), None, None, None, True, problem)
        # SPEC §7.4: a key that does not compile is a plain key (reported at import)
    whole = whole_lowered = None
    if not any(ch.isspace() for ch in text):
        whole = _word_pattern(text)
        whole_lowered = _word_pattern(text.lower())
    return CompiledKey(text, text.lower(), whole, whole_lowered, None, False)


def _word_pattern(needle: str) -> re.Pattern[str]:
    return re.compile(rf"(?:\A|[^{_WORD}]){re.escape(needle)}(?:\Z|[^{_WORD}])")


@dataclass(frozen=True, slots=True)
class Haystack:
    """A scan text in both cases, so each key test is one substring search."""

    raw: str
    lowered: str


def key_matches(key: CompiledKey, hay: Haystack, *, case_sensitive: bool, whole_words: bool) -> bool | None:
    """Whether `key` occurs in `hay`; None when a regex run was stopped by its time bound."""
    if key.is_regex:
        return key.regex(hay.raw) if key.regex is not None else False
    if not key.text:
        return False
    if case_sensitive:
        needle, text = key.text, hay.raw
    else:
        needle, text = key.lowered, hay.lowered
    if needle not in text:
        return False
    if not whole_words or key.whole_word is None:
        return True
    pattern = key.whole_word if case_sensitive else key.whole_word_lowered
    return pattern is not None and pattern.search(text) is not None
