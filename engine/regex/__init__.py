"""JavaScript regular expressions and SillyTavern regex scripts (SPEC §9). Pure: no Django.

Patterns run in an embedded QuickJS (the `quickjs-ng` wheel), one context per thread; a pattern is
compiled once per thread and kept. Every run is bounded (`RUN_LIMIT_SECONDS`, 50 ms of CPU).

Core API (also used by World Info for `/regex/flags` keys):
- `parse_find_regex(s) -> (pattern, flags)`: `/pattern/flags` with distinct flags from `gimsu`;
  any other string (or another flag letter) is the pattern itself with no flags.
- `compile_js_regex(pattern, flags) -> JsRegex`, raising `RegexCompileError` (`.message`, one sentence).
- `JsRegex.search(text) -> bool`; `JsRegex.spans(text) -> [(start, end)]` (Python indices; every
  match with `g`, the first without); `JsRegex.replace(text, replacement) -> str`. Each raises
  `RegexTimeout` (a `RegexError`) when the run passes the bound.
- `compile_replacement(template, trims) -> Replacement`: `{{match}}`, `$n`, `$<name>` insert groups
  (missing → ""), every other `$` form is literal, trim strings are removed from inserted values.
- `replace_many(texts, runs) -> BatchResult`: ordered `Run(regex, replacement, targets)` over a list
  of texts in one trip into the engine; a run stopped by the bound is skipped and reported.
"""

from .find import parse_find_regex
from .js import (
    RUN_LIMIT_SECONDS,
    BatchResult,
    JsRegex,
    RegexCompileError,
    RegexError,
    RegexTimeout,
    Replacement,
    Run,
    compile_js_regex,
    replace_many,
)
from .replacement import compile_replacement

__all__ = [
    "RUN_LIMIT_SECONDS",
    "BatchResult",
    "JsRegex",
    "RegexCompileError",
    "RegexError",
    "RegexTimeout",
    "Replacement",
    "Run",
    "compile_js_regex",
    "compile_replacement",
    "parse_find_regex",
    "replace_many",
]
