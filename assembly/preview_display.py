"""How the preview shows long text without changing it: a message's first lines for its collapsed
header, its content cut into segments where long runs of blank lines fold into one marker, and
variables as rows of a table.

Nothing here alters a character of what is sent: the segments joined give the content back, and
the page keeps the folded newlines inside the marker (copying the text copies them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

FOLD_BLANK_LINES = 2  # a run of at least this many blank lines folds into one marker
SNIPPET_LINES = 2
SNIPPET_CHARS = 160
VALUE_CHARS = 120


@dataclass(frozen=True, slots=True)
class Segment:
    text: str  # the exact characters
    blank_lines: int = 0  # > 0: a folded run of that many blank lines


@dataclass(frozen=True, slots=True)
class VariableRow:
    name: str
    value: str  # the text shown: a string as is, anything else as compact JSON
    type: str
    short: str  # the first line, cut, when `value` is long; "" when it is short


def segments(content: str) -> tuple[Segment, ...]:
    """`content` cut into text and folded runs of blank lines; the texts joined give `content`."""
    out: list[Segment] = []
    text: list[str] = []
    blank: list[str] = []

    def flush_blank() -> None:
        if len(blank) >= FOLD_BLANK_LINES:
            if text:
                out.append(Segment("".join(text)))
                text.clear()
            out.append(Segment("".join(blank), blank_lines=len(blank)))
        else:
            text.extend(blank)
        blank.clear()

    for line in content.splitlines(keepends=True):
        if line.strip():
            flush_blank()
            text.append(line)
        else:
            blank.append(line)
    flush_blank()
    if text or not out:
        out.append(Segment("".join(text)))
    return tuple(out)


def snippet(content: str) -> tuple[str, ...]:
    """The first few non-blank lines, each cut to a readable length, for a collapsed message."""
    lines = [line.strip() for line in content.splitlines() if line.strip()][:SNIPPET_LINES]
    return tuple(line if len(line) <= SNIPPET_CHARS else line[: SNIPPET_CHARS - 1] + "…" for line in lines)


def is_long(content: str) -> bool:
    """True when the collapsed snippet does not already show the whole message."""
    return "\n".join(snippet(content)) != content.strip()


def variable_rows(variables: dict[str, Any]) -> tuple[VariableRow, ...]:
    """One row per variable, in the order they were set."""
    return tuple(_row(str(name), value) for name, value in variables.items())


def _row(name: str, value: Any) -> VariableRow:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    first = text.strip().split("\n", 1)[0]
    long = len(text) > VALUE_CHARS or "\n" in text.strip()
    short = (first[: VALUE_CHARS - 1] + "…") if len(first) > VALUE_CHARS else (first + " …" if long else "")
    return VariableRow(name=name, value=text, type=_type_name(value), short=short)


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return "empty" if value is None else type(value).__name__
