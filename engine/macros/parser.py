"""Parse text once into a tree of text runs, macros and blocks (`compile_text`).

One left-to-right scan over brace runs (found with `str.find`, so plain text costs nothing per
character). Prompt text is read as SillyTavern 1.18's lexer reads it
(docs/fidelity.md#the-deliberate-differences, item 8): a macro ends at the first `}}` after it opens, whatever
single braces come before (`{{setvar::x::{"a":1}}}` sets `{"a":1` and leaves a `}`); only a `{{` inside a
macro opens a nested one. Chat messages' variable operations (docs/conversations.md, our own) count single
braces instead, so a JSON value such as `{{setvar::x::{"a":{"b":1}}}}` closes at the right `}}`; if counting
leaves a macro unclosed (a comment with a lone `{`), that macro is scanned again without counting. A brace
right after a backslash (`\\{`, `\\}`) is text, never macro syntax (docs/macros.md#macros-20). Opening and
closing tags are folded into blocks afterwards (`blocks.py`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from .blocks import group_blocks
from .catalog import COMMENT_CLOSE, IDENTITY_MACROS, KNOWN_MACROS, SHORTHAND_READ, SHORTHAND_WRITE
from .nodes import MAX_NESTING, Macro, Part, Parts, Variable

MAX_TEXT_CHARS = 1024 * 1024

_OPEN_RUN = re.compile(r"\{+")
_CLOSE_RUN = re.compile(r"\}+")
_SINGLE_BRACE_RANDOM = re.compile(r"random[\s:]", re.IGNORECASE)
_NAME = re.compile(r"[^\s:{}]+")
# SillyTavern 1.18's lexer reads a macro name as this and skips what follows it up to a space, a colon,
# a pipe or the closing braces (a lexing error it recovers from): `{{random@::a::b}}` is a random.
_ST_NAME = re.compile(r"[a-zA-Z][A-Za-z0-9_-]*")
_TIME_OFFSET = re.compile(r"time_(utc[+-]\d+)", re.IGNORECASE)
# `.name` / `$name`, then an operator (longest spellings first); the value follows the operator.
_VARIABLE = re.compile(
    r"([.$])([A-Za-z](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)\s*"
    r"(\|\|=|\?\?=|\+\+|--|\+=|-=|==|!=|>=|<=|\|\||\?\?|=|>|<)?"
)
VALUE_OPERATORS = frozenset({"=", "+=", "-=", "||", "??", "||=", "??=", "==", "!=", ">", ">=", "<", "<="})
WRITE_OPERATORS = frozenset({"=", "+=", "-=", "++", "--", "||=", "??="})
_MARKS = ("/", ".", "$")


@dataclass(frozen=True, slots=True)
class CompiledText:
    """A parsed text: picklable, reusable across renders."""

    source: str
    parts: Parts
    macro_names: frozenset[str] = frozenset()
    warnings: tuple[str, ...] = ()
    # True when rendering can change the text (it holds at least one macro); asked on every render.
    has_macros: bool = field(init=False, repr=False, compare=False, default=False)
    # What of its evaluation can be worked out once (engine.macros.render's `_fold`), made at its first render.
    folded: tuple[object, ...] | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "has_macros", any(not isinstance(part, str) for part in self.parts))

    def __reduce__(self) -> tuple[object, tuple[str]]:
        # Pickled as its source: parsing again is faster than unpickling ~15k node objects
        # (nemoengine-8.2: 17 ms vs 24 ms) and the payload is half the size.
        return compile_text, (self.source,)

    @property
    def unknown_names(self) -> frozenset[str]:
        """Lower-cased names of the macros in the text that the engine does not know."""
        return frozenset(name for name in self.macro_names if name and name not in KNOWN_MACROS)

    @property
    def is_comment_only(self) -> bool:
        """True when the text is only `{{// ...}}` comments, `{{trim}}` and whitespace (a comment node)."""
        seen = False
        for part in self.parts:
            if isinstance(part, str):
                if part.strip():
                    return False
            elif isinstance(part, Macro) and (part.name == "//" or (part.name == "trim" and not part.scoped)):
                seen = True
            else:
                return False
        return seen


def find_unsupported_macros(text: str) -> frozenset[str]:
    """Return the lower-cased names of the macros in `text` that the engine does not know."""
    return compile_text(text).unknown_names


def compile_text(text: str, *, escapes: bool = True, json_values: bool = False) -> CompiledText:
    """Parse `text` into a `CompiledText` (never raises; malformed macros stay literal text).

    `escapes=False` reads a backslash before a brace as plain text (chat messages, docs/conversations.md, keep
    their own escape rule); `json_values=True` counts single braces inside a macro (chat messages'
    variable operations), where prompt text follows SillyTavern's first `}}`.
    """
    if "{" not in text:
        return CompiledText(source=text, parts=(text,) if text else ())
    if len(text) > MAX_TEXT_CHARS:
        return CompiledText(
            source=text,
            parts=(text,),
            warnings=(
                f"A text of {len(text)} characters is longer than the 1 MiB limit; it was left verbatim.",
            ),
        )
    nocount: set[int] = set()
    count_all = json_values
    for _attempt in range(3):
        scan = _Scan(text, nocount, count_all, escapes and "\\" in text)
        unclosed = scan.run()
        retry = {start for start in unclosed if start not in nocount} if count_all else set()
        if not retry:
            break
        if nocount:  # a second failure: stop guessing and scan without counting at all
            count_all = False
        nocount |= retry
    return CompiledText(
        source=text,
        parts=scan.parts,
        macro_names=frozenset(scan.names),
        warnings=tuple(scan.warnings),
    )


def _brace_runs(text: str, escapes: bool) -> Iterator[tuple[int, int, bool]]:
    """Yield (start, end, is_opening) for each run of `{` or of `}`, in order.

    `str.find` per brace kind is an order of magnitude faster than a regex alternation over the text.
    With `escapes`, a brace right after a backslash is left out of its run (it is text).
    """
    next_open, next_close = text.find("{"), text.find("}")
    while next_open >= 0 or next_close >= 0:
        if next_close < 0 or 0 <= next_open < next_close:
            start, end = next_open, _OPEN_RUN.match(text, next_open).end()  # type: ignore[union-attr]
            next_open = text.find("{", end)
            if escapes and start and text[start - 1] == "\\":
                start += 1
                if start == end:
                    continue
            yield start, end, True
        else:
            start, end = next_close, _CLOSE_RUN.match(text, next_close).end()  # type: ignore[union-attr]
            next_close = text.find("}", end)
            if escapes and start and text[start - 1] == "\\":
                start += 1
                if start == end:
                    continue
            yield start, end, False


class _Frame:
    __slots__ = ("counting", "depth", "kind", "parts", "start", "text_from", "too_deep")

    def __init__(self, kind: str, start: int, text_from: int, counting: bool, too_deep: bool) -> None:
        self.kind = kind  # "root", "macro" ({{...}}) or "single" ({random...})
        self.start = start
        self.text_from = text_from
        self.parts: list[Part] = []
        self.depth = 0  # open single braces inside this macro
        self.counting = counting
        self.too_deep = too_deep


class _Scan:
    def __init__(self, text: str, nocount: set[int], count_all: bool, escapes: bool) -> None:
        self.text = text
        self.escapes = escapes
        self.nocount = nocount
        self.count_all = count_all
        self.names: set[str] = set()
        self.warnings: list[str] = []
        self.parts: Parts = ()

    def run(self) -> list[int]:
        """Scan the text; set `self.parts`; return the start offsets of macros left unclosed."""
        text = self.text
        root = _Frame("root", 0, 0, False, False)
        stack = [root]
        for pos, end, opening in _brace_runs(text, self.escapes):
            if opening:
                self._open(stack, pos, end - pos)
            else:
                self._close(stack, pos, end - pos)
        unclosed = [frame.start for frame in stack[1:]]
        self._flush(stack[-1], len(text))  # outer frames' remaining text belongs to their open child
        # An unclosed macro is literal text; its closed children still count. Each open frame's
        # parts end where its child starts, so the frames simply follow one another.
        flat = root.parts
        for frame in stack[1:]:
            flat.append("{{" if frame.kind == "macro" else "{")
            flat.extend(frame.parts)
        self.parts = group_blocks(_merge(flat))
        return unclosed

    def _flush(self, frame: _Frame, upto: int) -> None:
        if upto > frame.text_from:
            frame.parts.append(self.text[frame.text_from : upto])
            frame.text_from = upto

    def _push(self, stack: list[_Frame], kind: str, start: int, text_from: int) -> None:
        parent = stack[-1]
        self._flush(parent, start)
        counting = self.count_all and start not in self.nocount
        too_deep = parent.too_deep or len(stack) > MAX_NESTING
        if too_deep and not stack[1].too_deep:
            stack[1].too_deep = True  # the whole outermost macro stays verbatim
            self.warnings.append(
                f"Macros nested deeper than {MAX_NESTING} levels were left verbatim (at character {stack[1].start})."
            )
        stack.append(_Frame(kind, start, text_from, counting, too_deep))

    def _open(self, stack: list[_Frame], pos: int, run: int) -> None:
        top = stack[-1]
        if run >= 2:
            literal = run - 2  # `{{{x}}}`: the extra braces are text, as in SillyTavern
            if literal and top.kind != "root" and top.counting:
                top.depth += literal
            self._push(stack, "macro", pos + literal, pos + literal + 2)
        elif _SINGLE_BRACE_RANDOM.match(self.text, pos + 1):
            self._push(stack, "single", pos, pos + 1)
        elif top.kind != "root" and top.counting:
            top.depth += 1

    def _close(self, stack: list[_Frame], pos: int, run: int) -> None:
        while run > 0:
            top = stack[-1]
            if top.kind == "root":
                return
            if top.depth > 0:
                top.depth -= 1
                pos, run = pos + 1, run - 1
            elif top.kind == "single":
                self._finish(stack, pos, pos + 1)
                pos, run = pos + 1, run - 1
            elif run >= 2:
                self._finish(stack, pos, pos + 2)
                pos, run = pos + 2, run - 2
            else:
                return

    def _finish(self, stack: list[_Frame], content_end: int, end: int) -> None:
        frame = stack.pop()
        parent = stack[-1]
        if frame.too_deep:
            parent.parts.append(self.text[frame.start : end])
        else:
            self._flush(frame, content_end)
            parent.parts.append(self._build(frame, end))
        parent.text_from = end

    def _build(self, frame: _Frame, end: int) -> Part:
        raw_parts = frame.parts
        first = raw_parts[0] if len(raw_parts) == 1 else None
        if type(first) is str:
            return self._build_flat(first, frame, end)  # no nested macro: most macros
        parts = _merge(raw_parts)
        single = frame.kind == "single"
        head = parts[0] if parts and isinstance(parts[0], str) else ""
        stripped = head.lstrip()
        if not single and stripped.startswith(_MARKS):
            if stripped.startswith("//"):
                self.names.add("//")
                return Macro("//", frame.start, end, body=group_blocks(parts))
            if stripped[0] != "/":
                variable = self._variable(stripped, parts[1:], frame, end)
                if variable is not None:
                    return variable
        match = _NAME.match(stripped)
        name = match.group().lower() if match else ""
        rest_at = match.end() if match else 0
        if name and name not in KNOWN_MACROS:
            name = _name_past_stray(stripped, name)
            if name in IDENTITY_MACROS and len(parts) == 1 and not stripped[rest_at:].strip():
                self.names.add(name)  # its body: the plain form the end resolves
                return Macro(name, frame.start, end, body=("{{" + name + "}}",))
        if name:
            self.names.add(name)
        if not name or name not in KNOWN_MACROS:
            return Macro(name, frame.start, end, body=group_blocks(parts), single=single)
        rest = stripped[rest_at:]
        if rest.startswith("::"):
            rest = rest[2:]
        elif rest.startswith(":"):
            rest = rest[1:]
        tail: list[Part] = [rest] if rest else []
        tail.extend(parts[1:])
        return Macro(name, frame.start, end, args=_split_args(tail), single=single)

    def _build_flat(self, content: str, frame: _Frame, end: int) -> Part:
        """`_build` for content that is one text run (same result, without the general machinery)."""
        single = frame.kind == "single"
        stripped = content.lstrip()
        if not single and stripped.startswith(_MARKS):
            if stripped.startswith("//"):
                self.names.add("//")
                if stripped[2:3] == "/" and stripped.rstrip() == COMMENT_CLOSE:
                    return Macro(COMMENT_CLOSE, frame.start, end)
                return Macro("//", frame.start, end, body=(content,))
            if stripped[0] != "/":
                variable = self._variable(stripped, (), frame, end)
                if variable is not None:
                    return variable
        match = _NAME.match(stripped)
        name = match.group().lower() if match else ""
        if name and name not in KNOWN_MACROS:
            name = _name_past_stray(stripped, name)
            if name in IDENTITY_MACROS and match is not None and not stripped[match.end() :].strip():
                self.names.add(name)  # its body: the plain form the end resolves
                return Macro(name, frame.start, end, body=("{{" + name + "}}",))
        if not name or name not in KNOWN_MACROS:
            if name.startswith("time_"):
                offset = _TIME_OFFSET.fullmatch(stripped.rstrip())
                if offset is not None:  # {{time_UTC+2}}, the old spelling of {{time::UTC+2}}
                    self.names.add("time")
                    return Macro("time", frame.start, end, args=((offset.group(1),),))
            if name:
                self.names.add(name)
            return Macro(name, frame.start, end, body=(content,), single=single)
        assert match is not None  # a known name was read from the start of the text
        self.names.add(name)
        rest = stripped[match.end() :]
        if rest.startswith("::"):
            rest = rest[2:]
        elif rest.startswith(":"):
            rest = rest[1:]
        if not rest.strip():
            return Macro(name, frame.start, end, single=single)
        args = tuple((piece,) if piece else () for piece in rest.split("::"))
        return Macro(name, frame.start, end, args=args, single=single)

    def _variable(self, stripped: str, tail: Parts, frame: _Frame, end: int) -> Variable | None:
        """The variable shorthand `{{.x}}` / `{{$x ...}}` (docs/macros.md#macros-20), or None when the text is
        not one (it is then read as an ordinary macro)."""
        match = _VARIABLE.match(stripped)
        if match is None:
            return None
        scope, name, op = match.groups()
        op = op or ""
        rest = stripped[match.end() :]
        if op in VALUE_OPERATORS:
            value = group_blocks(_merge([rest, *tail]))
        elif rest.strip() or tail:
            return None  # `{{.x y}}` is not the shorthand
        else:
            value = ()
        self.names.add(SHORTHAND_WRITE if op in WRITE_OPERATORS else SHORTHAND_READ)
        return Variable(frame.start, end, scope, name, op, value)


def _merge(parts: list[Part] | tuple[Part, ...]) -> Parts:
    """Join adjacent text runs (each run joined once, so many small pieces stay linear)."""
    out: list[Part] = []
    pending: list[str] = []
    for part in parts:
        if type(part) is str:
            if part:
                pending.append(part)
            continue
        if pending:
            out.append("".join(pending))
            pending = []
        out.append(part)
    if pending:
        out.append("".join(pending))
    return tuple(out)


def _split_args(tail: list[Part]) -> tuple[Parts, ...]:
    """Split macro content on `::` in its text runs; nested macros stay inside their argument."""
    if not tail or (len(tail) == 1 and isinstance(tail[0], str) and not tail[0].strip()):
        return ()
    args: list[list[Part]] = [[]]
    for part in tail:
        if isinstance(part, str):
            pieces = part.split("::")
            if pieces[0]:
                args[-1].append(pieces[0])
            for piece in pieces[1:]:
                args.append([piece] if piece else [])
        else:
            args[-1].append(part)
    return tuple(group_blocks(arg) for arg in args)


def _name_past_stray(stripped: str, name: str) -> str:
    """The known macro SillyTavern 1.18 reads in a name with stray characters after it (`random@`),
    else the name as written."""
    found = _ST_NAME.match(stripped)
    if found is None or found.end() >= len(name):
        return name
    known = found.group().lower()
    return known if known in KNOWN_MACROS else name
