"""Splitting a script's replacement string into literals and group references
(docs/regex.md#scripts-and-their-engine)."""

from __future__ import annotations

import re

from .js import Replacement, Token

# `{{match}}` is the whole match; `$n` (any digits) a numbered group, `$<name>` a named one. Every
# other `$` form (`$&`, `$$`, `` $` ``, `$'`) stays literal: SillyTavern replaces through a function.
_REFERENCE = re.compile(r"\{\{match\}\}|\$(\d+)|\$<([^>]+)>", re.IGNORECASE)


def compile_replacement(template: str, trims: tuple[str, ...] = ()) -> Replacement:
    """The replacement a `JsRegex.replace` or `Run` applies; `trims` are removed from inserted groups."""
    tokens: list[Token] = []
    last = 0
    for found in _REFERENCE.finditer(template):
        if found.start() > last:
            tokens.append(template[last : found.start()])
        number, name = found.group(1), found.group(2)
        if name is not None:
            tokens.append((name,))
        else:
            tokens.append(int(number) if number is not None else 0)
        last = found.end()
    if last < len(template):
        tokens.append(template[last:])
    return Replacement(tuple(tokens), tuple(trims))
