"""Keys compiled once per book version (docs/worldinfo.md#keys), then tested against each request's scan text.

A plain key is a lower-cased substring test (a whole-word check only runs once the substring is
found); a `/pattern/flags` key is a JavaScript regular expression run by `engine.regex`, whose
every run is time-bounded (a stopped run counts as no match and is reported).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.bounded import MiB, text_cache
from engine.regex import JsRegex, RegexError, RegexTimeout, compile_js_regex

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


def compile_regex_key(pattern: str, flags: str) -> tuple[JsRegex | None, str]:
    """(regex, problem): the JavaScript regex, or None and the engine's sentence saying why not."""
    try:
        # `g` and `y` only move where a repeated search starts; SillyTavern builds a new RegExp per test
        return compile_js_regex(pattern, flags.replace("g", "").replace("y", "")), ""
    except RegexError as exc:
        return None, exc.message


@dataclass(frozen=True, slots=True)
class CompiledKey:
    """One key ready to test (picklable, so a compiled book can be cached)."""

    text: str
    lowered: str
    regex: JsRegex | None

    @property
    def is_regex(self) -> bool:
        """True for a `/pattern/flags` key that compiled as JavaScript."""
        return self.regex is not None


def compile_key(text: str) -> CompiledKey:
    """The key `text` compiled: a JavaScript regex when written `/…/flags` and valid, else plain.

    docs/worldinfo.md#keys: a regex key that does not compile is a plain key (the import summary reports it).
    """
    parsed = parse_regex_key(text)
    if parsed is not None:
        regex, _ = compile_regex_key(*parsed)
        if regex is not None:
            return CompiledKey(text, text.lower(), regex)
    return CompiledKey(text, text.lower(), None)


@text_cache(max_entries=65_536, max_bytes=32 * MiB, weight=4)  # a compiled pattern
def _word_pattern(needle: str) -> re.Pattern[str]:
    """The whole-word test for `needle`, built on first use (most keys never need it)."""
    return re.compile(rf"(?:\A|[^{_WORD}]){re.escape(needle)}(?:\Z|[^{_WORD}])")


@dataclass(frozen=True, slots=True)
class Haystack:
    """A scan text in both cases, so each key test is one substring search."""

    raw: str
    lowered: str


def key_matches(key: CompiledKey, hay: Haystack, *, case_sensitive: bool, whole_words: bool) -> bool | None:
    """Whether `key` occurs in `hay`; None when a regex run was stopped by its time bound.

    A regex key runs on the raw text; case and whole-word settings do not apply to it.
    """
    if key.regex is not None:
        try:
            return key.regex.search(hay.raw)
        except RegexTimeout:
            return None
    if not key.text:
        return False
    needle, text = (key.text, hay.raw) if case_sensitive else (key.lowered, hay.lowered)
    if needle not in text:
        return False
    if not whole_words or any(ch.isspace() for ch in needle):
        return True  # a key with whitespace matches as a phrase
    return _word_pattern(needle).search(text) is not None
