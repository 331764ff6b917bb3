"""Evaluate compiled texts: SPEC §2.2's two passes over the segments, in order, with the §2.3 limits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from .catalog import IDENTITY_MACROS, VARIABLE_MACROS
from .clock import local_now
from .dice import base_seed
from .env import MacroEnv, RenderOutput, Segment, SegmentOutput
from .handlers import HANDLERS, TRIM_MARK
from .parser import MAX_NESTING, MAX_TEXT_CHARS, CompiledText, EachBlock, Macro, Parts, compile_text
from .paths import PathError, get_path, split_path
from .values import as_collection

MAX_EACH_ITERATIONS = 1000
MAX_EVALUATIONS = 200_000  # per pass; generous for real presets (the heaviest uses ~3,000)
MAX_WARNINGS = 200

_READS = frozenset({"getvar", "getglobalvar", "each"})
_WRITES = VARIABLE_MACROS - {"getvar", "getglobalvar"}


def render_text(
    text: str,
    *,
    env: MacroEnv | None = None,
    seed: int = 0,
    variables: Mapping[str, Any] | None = None,
    global_variables: Mapping[str, Any] | None = None,
) -> RenderOutput:
    """Render one text as a single segment with key "text" (see `render_segments`); warnings are
    plain sentences, without a segment label."""
    return render_segments(
        [Segment("text", compile_text(text))],
        env=env or MacroEnv(),
        seed=seed,
        variables=variables,
        global_variables=global_variables,
        label_warnings=False,
    )


def render_segments(
    segments: Sequence[Segment],
    *,
    env: MacroEnv,
    seed: int,
    variables: Mapping[str, Any] | None = None,
    global_variables: Mapping[str, Any] | None = None,
    label_warnings: bool = True,
) -> RenderOutput:
    """Render `segments` in order from the variable state S0 (`variables`, `global_variables`).

    Pass 1 runs from S0 to find S1; pass 2 runs from S0 again and gives the output, where a read of
    a key that S0 lacks and pass 2 has not written yet sees its S1 value. Random, roll and pick
    draw the same values in both passes. Deferred identity macros stay in the texts. Each warning
    names its segment (`In "main": …`) unless `label_warnings` is False.
    """
    moment, zone_warning = local_now(env.now, env.timezone)
    start_local = dict(variables or {})
    start_global = dict(global_variables or {})
    names: set[str] = set()
    for segment in segments:
        names |= segment.template.macro_names
    draws: dict[tuple, int] = {}  # shared by both passes: the same macro draws the same value
    forward_local: dict[str, Any] | None = None
    forward_global: dict[str, Any] | None = None
    if names & _READS and names & _WRITES:  # otherwise S1 could not change a read
        first = _Pass(env, seed, moment, start_local, start_global, None, None, draws, report=False)
        for segment in segments:
            if segment.template.macro_names & _WRITES:  # a segment without writes cannot change S1
                first.render(segment)
        forward_local, forward_global = first.local.values, first.global_.values
    final = _Pass(
        env, seed, moment, start_local, start_global, forward_local, forward_global, draws, report=True
    )
    final.label = label_warnings
    if zone_warning and names & {"time", "date", "weekday", "isotime", "isodate", "datetimeformat"}:
        final.warnings.append(zone_warning)
    outputs = tuple(final.render(segment) for segment in segments)
    warnings = tuple(dict.fromkeys(final.warnings))
    if len(warnings) > MAX_WARNINGS:
        warnings = (*warnings[:MAX_WARNINGS], f"{len(warnings) - MAX_WARNINGS} more warnings were left out.")
    return RenderOutput(
        segments=outputs,
        variables=final.local.values,
        global_variables=final.global_.values,
        warnings=warnings,
        unknown_macros=frozenset(final.unknown),
    )


def _apply_trim(text: str) -> str:
    """Remove each {{trim}} placeholder with the line breaks (`\n` or `\r\n`) right before and after it."""
    pieces = text.split(TRIM_MARK)
    for index in range(len(pieces) - 1):
        left = pieces[index]
        end = len(left)
        while end and left[end - 1] == "\n":
            end -= 2 if end >= 2 and left[end - 2] == "\r" else 1
        pieces[index] = left[:end]
        right = pieces[index + 1]
        start = 0
        while right.startswith(("\n", "\r\n"), start):
            start += 1 if right[start] == "\n" else 2
        pieces[index + 1] = right[start:]
    return "".join(pieces)


class _TooLarge(Exception):
    """Raised when the text being built passes MAX_TEXT_CHARS; the enclosing loop or node stays verbatim."""


class _Namespace:
    """One variable namespace during a pass; `forward` (S1) answers reads of keys not yet known."""

    __slots__ = ("forward", "initial", "values", "written")

    def __init__(self, start: dict[str, Any], forward: dict[str, Any] | None) -> None:
        self.values = dict(start)
        self.initial = frozenset(start)
        self.written: set[str] = set()
        self.forward = forward

    def read(self, key: str) -> tuple[bool, Any]:
        if key in self.values:
            return True, self.values[key]
        forward = self.forward
        if forward is not None and key in forward and key not in self.initial and key not in self.written:
            return True, forward[key]
        return False, None

    def write(self, key: str, value: Any) -> None:
        self.values[key] = value
        self.written.add(key)

    def delete(self, key: str) -> None:
        self.values.pop(key, None)
        self.written.add(key)


class _Pass:
    """One walk over the segments; holds the variables, the draw counters and what was reported."""

    def __init__(
        self,
        env: MacroEnv,
        seed: int,
        moment: datetime,
        start_local: dict[str, Any],
        start_global: dict[str, Any],
        forward_local: dict[str, Any] | None,
        forward_global: dict[str, Any] | None,
        drawn: dict[tuple, int],
        *,
        report: bool,
    ) -> None:
        self.env = env
        self.seed = seed
        self.moment = moment
        self.local = _Namespace(start_local, forward_local)
        self.global_ = _Namespace(start_global, forward_global)
        self.report = report
        self.label = True
        self.warnings: list[str] = []
        self.unknown: set[str] = set()
        self.evaluations = 0
        self.exhausted = False
        self.loops: list[tuple[Any, Any]] = []
        self.each_depth = 0
        self.key = ""
        self.source = ""
        self.draws: dict[int, int] = {}
        self.base = 0
        self.drawn = drawn
        self.expanded: set[str] = set()

    # -- driving ---------------------------------------------------------------------------------

    def render(self, segment: Segment) -> SegmentOutput:
        template: CompiledText = segment.template
        for warning in template.warnings:
            self.warn(warning, segment.key)
        if not template.has_macros:
            return SegmentOutput(segment.key, template.source)
        self.key, self.source = segment.key, template.source
        self.draws, self.expanded = {}, set()
        self.base = base_seed("draw", self.seed, segment.key)
        try:
            text = self.parts(template.parts)
        except _TooLarge:
            text = ""
            too_large = True
        else:
            too_large = len(text) > MAX_TEXT_CHARS
        if TRIM_MARK in text:
            text = _apply_trim(text)
        if too_large:
            self.warn("The rendered text is longer than the 1 MiB limit; the node was left verbatim.")
            return SegmentOutput(segment.key, template.source)
        return SegmentOutput(segment.key, text, frozenset(self.expanded))

    def warn(self, message: str, key: str | None = None) -> None:
        if self.report:
            if self.label:
                message = f'In "{key if key is not None else self.key}": {message}'
            self.warnings.append(message)

    def parts(self, parts: Parts) -> str:
        if len(parts) == 1 and parts[0].__class__ is str:
            return parts[0]  # type: ignore[return-value]
        out = []
        produced = 0
        for part in parts:
            kind = part.__class__
            if kind is str:
                out.append(part)
                continue
            piece = self.macro(part) if kind is Macro else self.each(part)  # type: ignore[arg-type]
            produced += len(piece)
            if produced > MAX_TEXT_CHARS:  # stop before memory grows: 10k getvars of a 1 MiB value...
                raise _TooLarge
            out.append(piece)
        return "".join(out)

    def raw(self, node: Macro | EachBlock) -> str:
        return self.source[node.start : node.end]

    def spend(self) -> bool:
        """Count one evaluation; False (after one warning) once the pass's budget is used up."""
        self.evaluations += 1
        if self.evaluations <= MAX_EVALUATIONS:
            return True
        if not self.exhausted:
            self.exhausted = True
            self.warn(f"More than {MAX_EVALUATIONS} macro evaluations; the rest were left verbatim.")
        return False

    def macro(self, macro: Macro) -> str:
        self.evaluations += 1
        if self.evaluations > MAX_EVALUATIONS:
            self.evaluations -= 1  # spend() counts it again and warns once
            if not self.spend():
                return self.raw(macro)
        handler = HANDLERS.get(macro.name)
        if handler is not None:
            return handler(self, macro)
        if macro.name in IDENTITY_MACROS:
            return self.raw(macro)
        if macro.name and self.report:
            self.unknown.add(macro.name)
        if macro.single:
            return "{" + self.parts(macro.body) + "}"
        return "{{" + self.parts(macro.body) + "}}"

    def arg(self, macro: Macro, index: int) -> str:
        args = macro.args
        return self.parts(args[index]) if index < len(args) else ""

    def rest(self, macro: Macro, index: int) -> str:
        """Arguments from `index` on, joined back with `::` (a value may itself contain `::`)."""
        args = macro.args
        if len(args) == index + 1:
            return self.parts(args[index])
        return "::".join(self.parts(arg) for arg in args[index:])

    # -- each ------------------------------------------------------------------------------------

    def each(self, block: EachBlock) -> str:
        if not self.spend():
            return self.raw(block)
        if self.each_depth >= MAX_NESTING:
            self.warn(f"`each` loops nested deeper than {MAX_NESTING} levels were left verbatim.")
            return self.raw(block)
        items = self.collection(self.arg(block.opener, 0).strip())
        if len(items) > MAX_EACH_ITERATIONS:
            self.warn(
                f"An `each` loop over {len(items)} items exceeds the {MAX_EACH_ITERATIONS}-iteration limit; "
                "it was left verbatim."
            )
            return self.raw(block)
        out: list[str] = []
        total = 0
        self.each_depth += 1
        try:
            for item in items:
                if not self.spend():
                    return self.raw(block)
                self.loops.append(item)
                try:
                    piece = self.parts(block.body)
                except _TooLarge:
                    piece = None
                finally:
                    self.loops.pop()
                total += MAX_TEXT_CHARS + 1 if piece is None else len(piece)
                if total > MAX_TEXT_CHARS:
                    self.warn("An `each` loop produced more than 1 MiB of text; it was left verbatim.")
                    return self.raw(block)
                out.append(piece)  # type: ignore[arg-type]
        finally:
            self.each_depth -= 1
        return "".join(out)

    def collection(self, spec: str) -> list[tuple[Any, Any]]:
        """The (key, value) pairs an `each` iterates: an inline JSON literal or a variable's value."""
        if spec[:1] in ("[", "{"):
            value: Any = as_collection(spec)
        else:
            value = as_collection(self.lookup(self.local, spec)) if spec else None
        if isinstance(value, dict):
            return list(value.items())
        if isinstance(value, list):
            return list(enumerate(value))
        return []

    # -- variables -------------------------------------------------------------------------------

    def lookup(self, namespace: _Namespace, key: str) -> Any:
        """A read: a dotted path into a JSON value when the head holds one, else the flat key."""
        if "." in key:
            head = key.split(".", 1)[0].strip()
            found, root = namespace.read(head)
            collection = as_collection(root) if found else None
            if collection is not None:
                try:
                    found, value = get_path(collection, split_path(key)[1:])
                except PathError as error:
                    self.warn(str(error))
                    return ""
                if found:
                    return value
        return namespace.read(key)[1]

    def key_of(self, macro: Macro) -> str:
        key = self.arg(macro, 0).strip()
        if not key:
            self.warn(f"`{macro.name}` without a variable name was ignored.")
        return key
