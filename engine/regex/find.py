"""Reading a SillyTavern `findRegex` string into a JavaScript pattern and its flags
(docs/regex.md#scripts-and-their-engine)."""

from __future__ import annotations

import re

_SLASHED = re.compile(r"/(.*)/([A-Za-z]*)", re.DOTALL)
_FLAG_LETTERS = frozenset("gimsu")


def parse_find_regex(find_regex: str) -> tuple[str, str]:
    """`/pattern/flags` → (pattern, flags); anything else → (whole string, "").

    Flags must be distinct letters from `gimsu`; any other letter (or a repeated one) makes the whole
    string, slashes included, the pattern with no flags, as SillyTavern does.
    """
    slashed = _SLASHED.fullmatch(find_regex)
    if slashed is None:
        return find_regex, ""
    pattern, flags = slashed.group(1), slashed.group(2)
    if not pattern:
        return find_regex, ""
    if set(flags) - _FLAG_LETTERS or len(set(flags)) != len(flags):
        return find_regex, ""
    return pattern, flags
