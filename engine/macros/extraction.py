"""Pull the write macros out of a chat message (docs/conversations.md), using the engine's own parser.

`extract_ops` scans a message's text for top-level `setvar`, `addvar`, `incvar`, `decvar` and
`deletevar` macros, in source order. For each one, the nested display macros in its key and value
(`{{getvar::…}}`, `{{random::…}}`, `{{roll::…}}`, clock macros…) are rendered against the state so
far, the resulting op is applied at once (so the next macro sees it) and recorded, and the macro is
removed from the visible text. Write macros nested inside a value stay literal text; identity
macros (`{{user}}`…) stay deferred, to be replaced wherever the value is finally used. A write
macro written as `\\{{setvar::…}}` is escaped: it stays in the text (without the backslash).
Global variable writes are not extracted (they are not per-message state).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from .env import MacroEnv
from .nodes import Macro, Part, Parts, children
from .parser import compile_text
from .render import render_text
from .replay import VALUE_OPS, WRITE_OPS, Op, OpError, apply_op, make_op

_WRITES = frozenset(WRITE_OPS)
_HOLE = "\ue002"  # where a macro was removed, to tidy the spaces and lines around it
_TIDY_BETWEEN_WORDS = re.compile(r"(?<=\S)[ \t]+" + _HOLE + r"(?:[ \t]*" + _HOLE + r")*[ \t]+(?=\S)")
_TIDY_LINE_START = re.compile(r"^[ \t]*" + _HOLE + r"[ \t" + _HOLE + r"]*", re.MULTILINE)
_TIDY_LINE_END = re.compile(r"[ \t]*" + _HOLE + r"[ \t" + _HOLE + r"]*(?=\n|$)")


@dataclass(frozen=True, slots=True)
class Extraction:
    """What one extraction produced: the visible text, the ops in order, the state after them."""

    text: str
    ops: tuple[Op, ...]
    variables: dict[str, Any]
    warnings: tuple[str, ...] = ()


def random_seed(*key: object) -> int:
    """A stable 63-bit seed for the random draws of one op, from e.g. (message, swipe, position)."""
    digest = hashlib.sha256(repr(key).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def extract_ops(
    text: str,
    *,
    variables: Mapping[str, Any],
    random_key: tuple[object, ...] = (),
    first_position: int = 0,
    env: MacroEnv | None = None,
) -> Extraction:
    """Extract the write macros of `text` against the state `variables` (left untouched).

    Returns the text without them, the ops (each with its key and value resolved), the state after
    applying them, and warnings (refused paths, renders that warned). Random draws in op number
    `first_position + i` are seeded by `random_seed(*random_key, first_position + i)`, so the same
    message, swipe and position always draw the same values.
    """
    state = dict(variables)
    if "{" not in text:
        return Extraction(text, (), state)
    compiled = compile_text(text, escapes=False, json_values=True)
    source = compiled.source
    pieces: list[str] = []
    ops: list[Op] = []
    warnings: list[str] = list(compiled.warnings)
    cursor = 0
    for part in compiled.parts:
        if not _is_write(part):
            continue
        macro = part
        if macro.start > 0 and source[macro.start - 1] == "\\":
            pieces.append(source[cursor : macro.start - 1])
            pieces.append(source[macro.start : macro.end])
            cursor = macro.end
            continue
        pieces.append(source[cursor : macro.start])
        pieces.append(_HOLE)
        cursor = macro.end
        seed = random_seed(*random_key, first_position + len(ops))
        op, problems = _resolve(macro, source, state, seed, env)
        warnings.extend(problems)
        if op is None:
            continue
        warning = apply_op(state, op)
        if warning:
            warnings.append(warning)
        ops.append(op)
    pieces.append(source[cursor:])
    return Extraction(_tidy("".join(pieces)), tuple(ops), state, tuple(warnings))


def _is_write(part: Part) -> TypeGuard[Macro]:
    return isinstance(part, Macro) and part.name in _WRITES and not part.single


def _resolve(
    macro: Macro, source: str, state: Mapping[str, Any], seed: int, env: MacroEnv | None
) -> tuple[Op | None, list[str]]:
    """The op a write macro stands for, its key and value rendered against `state`."""
    raw = source[macro.start : macro.end]
    args = macro.args
    if not args:
        return None, [f"{raw} has no variable name; it was removed and ignored."]
    problems: list[str] = []
    key = _render(args[0], source, state, seed, env, problems).strip()
    value = ""
    if macro.name in VALUE_OPS:
        value = "::".join(_render(arg, source, state, seed, env, problems) for arg in args[1:])
    try:
        return make_op(macro.name, key, value), problems
    except OpError as error:
        return None, [*problems, f"{raw}: {error} It was removed and ignored."]


def _render(
    arg: Parts, source: str, state: Mapping[str, Any], seed: int, env: MacroEnv | None, problems: list[str]
) -> str:
    """Render one argument against `state`; nested write macros come back as their literal source."""
    literals: list[str] = []

    def hold(raw: str) -> str:
        literals.append(raw)
        return f"\ue000{len(literals) - 1}\ue001"

    text = "".join(_source_of(part, source, hold) for part in arg)
    if "{" not in text:
        rendered = text
    else:
        output = render_text(text, env=env, seed=seed, variables=state)
        problems.extend(output.warnings)
        rendered = output.text
    if literals:
        rendered = re.sub("\ue000(\\d+)\ue001", lambda match: literals[int(match.group(1))], rendered)
    return rendered


def _source_of(part: Part, source: str, hold: Callable[[str], str]) -> str:
    """The source text of a part, with every write macro inside it replaced by `hold(its source)`."""
    if isinstance(part, str):
        return part
    if _is_write(part):
        return hold(source[part.start : part.end])
    spans = sorted(_nested_writes(part))
    if not spans:
        return source[part.start : part.end]
    out, cursor = [], part.start
    for start, end in spans:
        out.append(source[cursor:start])
        out.append(hold(source[start:end]))
        cursor = end
    out.append(source[cursor : part.end])
    return "".join(out)


def _nested_writes(node: Part) -> list[tuple[int, int]]:
    """Spans of the outermost write macros anywhere inside `node`."""
    spans: list[tuple[int, int]] = []
    for run in children(node):
        for child in run:
            if isinstance(child, str):
                continue
            if _is_write(child):
                spans.append((child.start, child.end))
            else:
                spans.extend(_nested_writes(child))
    return spans


def _tidy(text: str) -> str:
    """Remove the holes left by extracted macros: no doubled spaces, no lines left empty by them."""
    if _HOLE not in text:
        return text
    lines = text.split("\n")
    text = "\n".join(line for line in lines if not (_HOLE in line and not line.replace(_HOLE, "").strip()))
    text = _TIDY_BETWEEN_WORDS.sub(" ", text)
    text = _TIDY_LINE_END.sub("", text)
    text = _TIDY_LINE_START.sub("", text)
    return text.replace(_HOLE, "")
