"""Evaluate compiled texts: one pass over the segments, in order, as SillyTavern 1.18 renders
(docs/assembly.md#what-sillytavern-118-corrected), within docs/macros.md#limits."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import repeat
from typing import Any

from engine.bounded import MiB, text_cache

from .catalog import ARITY, IDENTITY_MACROS, PRESERVING, SHORTHAND_WRITE, VARIABLE_MACROS
from .clock import local_now
from .dice import draw_below, draw_seed, split_choices
from .env import MacroEnv, RenderOutput, Segment, SegmentOutput
from .flow import render_if, render_scoped, render_variable
from .handlers import HANDLERS, TRIM_MARK
from .memo import CLOCK, SEED, ReadsEnv, RenderMemo, frozen_value
from .nodes import MAX_NESTING, EachBlock, IfBlock, Macro, Parts, Scoped, Variable
from .parser import MAX_TEXT_CHARS, CompiledText, compile_text
from .paths import PathError, get_path, split_path
from .state import ABSENT, DrawKey, Namespace
from .values import as_collection, to_text

MAX_EACH_ITERATIONS = 1000
MAX_EVALUATIONS = 200_000  # per pass; generous for real presets (the heaviest uses ~3,000)
MAX_WARNINGS = 200

_CLOCK_MACROS = frozenset({"time", "date", "weekday", "isotime", "isodate", "datetimeformat"})
_WRITES = VARIABLE_MACROS - {"getvar", "getglobalvar"}
_WRITES |= {SHORTHAND_WRITE, *(flagged for flagged, name in PRESERVING.items() if name in _WRITES)}


def render_texts(
    texts: Sequence[tuple[str, str]],
    *,
    env: MacroEnv,
    seed: int,
    variables: Mapping[str, Any] | None = None,
    global_variables: Mapping[str, Any] | None = None,
) -> RenderOutput:
    """Render a few short (key, text) pairs in order, such as a preset's settings or a card's fields:
    each text is parsed once per process (`compiled_once`), the variables flow from one to the next."""
    return render_segments(
        [segment_once(key, text) for key, text in texts],
        env=env,
        seed=seed,
        variables=variables,
        global_variables=global_variables,
    )


@text_cache(max_entries=1024, max_bytes=64 * MiB, weight=3)  # parts: slices of the text and more
def compiled_once(text: str) -> CompiledText:
    """`compile_text(text)`, kept per process: settings and card texts recur on every assembly."""
    return compile_text(text)


@text_cache(max_entries=1024, max_bytes=64 * MiB, weight=3)
def segment_once(key: str, text: str) -> Segment:
    """`Segment(key, compiled_once(text))`, kept per process like the parse: a setting's text renders on
    every assembly, and its last render is then reused when it would read the same (`_Pass.render_kept`)."""
    return Segment(key, compiled_once(text))


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
    memo: RenderMemo | None = None,
) -> RenderOutput:
    """Render `segments` in order from the variable state S0 (`variables`, `global_variables`), in one
    pass, as SillyTavern 1.18 renders a prompt's parts (docs/assembly.md#what-sillytavern-118-corrected): a
    write takes effect at once, and a read of a key nothing has given a value yet is empty. Deferred identity
    macros stay in the texts. Each warning names its segment (`In "main": …`) unless `label_warnings` is
    False. With a `memo` (one per set of segments), a render that would read the same inputs as a kept one is
    that one (memo.py).
    """
    start_local = dict(variables or {})
    start_global = dict(global_variables or {})
    read: set[str] = set()
    seen_env: MacroEnv = env
    if memo is not None:
        kept = memo.find(env, seed, start_local, start_global, label_warnings)
        if kept is None:
            kept = _from_kept(segments, env, start_local, start_global, label_warnings, read)
            if kept is not None:
                memo.keep(env, seed, start_local, start_global, label_warnings, read, kept, texts_only=True)
        if kept is not None:
            return kept
        read.clear()
        seen_env = ReadsEnv(env, read)  # type: ignore[assignment]
    final = _Pass(seen_env, seed, None, start_local, start_global, {}, label=label_warnings, read=read)
    final.plain_env = env
    texts_at_start = final.local.texts_only and final.global_.texts_only
    outputs: list[SegmentOutput] = []
    clock = False  # a segment with a clock macro came: the local time is worked out, its warning kept
    zone_warning = ""
    for segment in segments:
        fixed = segment.fixed
        if fixed is None:
            if not clock and segment.template.macro_names & _CLOCK_MACROS:
                clock = True
                read.add(CLOCK)  # the time zone's warning depends on the clock's settings
                moment, zone_warning = local_now(env.now, env.timezone)
                if final._moment is None:  # one time for the whole pass
                    final._moment = moment
            outputs.append(final.render_kept(segment))
        elif segment.plain:  # plain text: nothing to read or write
            outputs.append(fixed)
        elif final.evaluations + segment.identities <= MAX_EVALUATIONS:
            final.evaluations += segment.identities  # as if rendered: the budget runs out at the same macro
            outputs.append(fixed)
        else:
            outputs.append(final.render(segment))  # `static`: identity macros and comments, no clock
    if zone_warning:
        final.warnings.append(zone_warning)
    warnings = _capped(final.warnings)
    output = RenderOutput(
        segments=tuple(outputs),
        # the caller's own dicts, never a kept render's
        variables=final.local.values,
        global_variables=final.global_.values,
        warnings=warnings,
        unknown_macros=frozenset(final.unknown),
    )
    if memo is not None:
        texts_only = texts_at_start and final.local.texts_only and final.global_.texts_only
        # start_local and start_global are this call's own copies (the pass changed its own)
        memo.keep(env, seed, start_local, start_global, label_warnings, read, output, texts_only=texts_only)
    return output


def _from_kept(
    segments: Sequence[Segment],
    env: MacroEnv,
    start_local: dict[str, Any],
    start_global: dict[str, Any],
    label: bool,
    read: set[str],
) -> RenderOutput | None:
    """What `render_segments` gives when every segment is fixed or has a kept render it would reuse
    (`_Pass.render_kept`), worked out without a pass; None when one is not so. Only from variables that
    are all strings (a kept render's writes are strings: so are the variables after), and noting in
    `read` the env fields the kept renders read, as the pass would."""
    if not (_all_keepable(segments) and _texts(start_local) and _texts(start_global)):
        return None
    local, global_ = dict(start_local), dict(start_global)
    warnings: list[str] = []
    unknown: dict[str, None] = {}
    outputs: list[SegmentOutput] = []
    evaluations = 0
    for segment in segments:
        fixed = segment.fixed
        if fixed is not None:
            if not segment.plain:
                evaluations += segment.identities
                if evaluations > MAX_EVALUATIONS:
                    return None
            outputs.append(fixed)
            continue
        kept: _Kept | None = segment.kept.get(label)
        if (
            kept is None
            or evaluations + kept.spent > MAX_EVALUATIONS
            or (
                kept.local_keys
                and tuple(map(local.get, kept.local_keys, repeat(ABSENT))) != kept.local_values
            )
            or (
                kept.global_keys
                and tuple(map(global_.get, kept.global_keys, repeat(ABSENT))) != kept.global_values
            )
            or (kept.fields and any(getattr(env, name) != value for name, value in kept.fields))
        ):
            return None
        evaluations += kept.spent
        if kept.fields:
            read.update(name for name, _ in kept.fields)
        if kept.local_set:
            local.update(kept.local_set)
        if kept.global_set:
            global_.update(kept.global_set)
        for key in kept.local_deleted:
            local.pop(key, None)
        for key in kept.global_deleted:
            global_.pop(key, None)
        if kept.warnings:
            warnings += kept.warnings
        if kept.unknown:
            unknown.update(dict.fromkeys(kept.unknown))
        outputs.append(kept.output)
    return RenderOutput(tuple(outputs), local, global_, _capped(warnings), frozenset(unknown))


_KEEPABLE: dict[int, tuple[Sequence[Segment], bool]] = {}  # by id of the segments, which it holds


def _all_keepable(segments: Sequence[Segment]) -> bool:
    """Whether every segment to render may be a kept one (draws nothing, reads no clock): a preset
    with one that draws (near the end of a long list, often) does not look at the others first.
    Worked out once per set of segments (a preset plan's)."""
    found = _KEEPABLE.get(id(segments))
    if found is not None and found[0] is segments:
        return found[1]
    answer = all(
        segment.fixed is not None
        or (
            segment.template.macro_names.isdisjoint(_DRAWING)
            and segment.template.macro_names.isdisjoint(_CLOCK_MACROS)
        )
        for segment in segments
    )
    if len(_KEEPABLE) >= 256:  # a few plans per preset in use
        _KEEPABLE.clear()
    _KEEPABLE[id(segments)] = (segments, answer)
    return answer


def _texts(values: dict[str, Any]) -> bool:
    return not values or all(type(value) is str for value in values.values())


def _capped(found: list[str]) -> tuple[str, ...]:
    """The pass's warnings once each, at most MAX_WARNINGS of them."""
    warnings = tuple(dict.fromkeys(found))
    if len(warnings) > MAX_WARNINGS:
        warnings = (*warnings[:MAX_WARNINGS], f"{len(warnings) - MAX_WARNINGS} more warnings were left out.")
    return warnings


def static_text(template: CompiledText) -> tuple[str, int] | None:
    """What every render gives `template`, and its macros' count, when its only macros are identity
    macros (each stays as written, for the end: nothing read, nothing drawn), comments of plain text
    (nothing) and argument-less `{{trim}}` (the line breaks around it removed, as a render removes them);
    None otherwise.
    Worked out once per preset (engine.assemble.rearrange's plan), so such nodes are never rendered again."""
    if not template.has_macros or template.warnings:
        return None
    out: list[str] = []
    count = 0
    for part in template.parts:
        if part.__class__ is str:
            out.append(part)  # type: ignore[arg-type]
            continue
        if part.__class__ is Macro and part.name == "//" and not part.args:  # type: ignore[union-attr]
            if not all(piece.__class__ is str for piece in part.body):  # type: ignore[union-attr]
                return None  # a macro inside a comment still runs
            count += 1  # a comment: nothing, one evaluation
            continue
        if part.__class__ is Macro and part.name == "trim" and not part.args:  # type: ignore[union-attr]
            out.append(TRIM_MARK)  # removed below with the line breaks around it, as `_Pass.render` does
            count += 1
            continue
        if part.__class__ is not Macro or part.name not in IDENTITY_MACROS or part.name in HANDLERS:  # type: ignore[union-attr]
            return None
        if part.body and part.body[0].__class__ is not str:  # type: ignore[union-attr]
            return None
        out.append(_identity_form(part, template.source))  # type: ignore[arg-type]
        count += 1
    text = "".join(out)
    if len(text) > MAX_TEXT_CHARS:
        return None  # rendered, to say so
    if TRIM_MARK in text:
        text = _apply_trim(text)
    return text, count


def _identity_form(macro: Macro, source: str) -> str:
    """An identity macro as a render leaves it for the end: its plain form when the parser read past
    stray characters (`{{char!}}` → `{{char}}`), else as written."""
    first = macro.body[0] if macro.body else None  # the parser gives these a text body
    return first if isinstance(first, str) else source[macro.start : macro.end]


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


_NONE_EXPANDED: frozenset[str] = frozenset()
# Each known macro's handler with the argument counts it takes (None: not checked), found in one lookup.
_DISPATCH: dict[str, tuple[Callable[[Any, Macro], str], tuple[int, int] | None]] = {
    name: (handler, ARITY.get(name)) for name, handler in HANDLERS.items()
}


# The macros whose text depends on the seed or the clock: a segment holding one is always rendered.
_DRAWING = (
    frozenset(
        name
        for name, handler in HANDLERS.items()
        if handler in (HANDLERS["random"], HANDLERS["roll"], HANDLERS["pick"], HANDLERS["time"])
        or handler is HANDLERS["datetimeformat"]
    )
    | _CLOCK_MACROS
)


@dataclass(frozen=True, slots=True)
class _Const:
    """A run of macros that render the same text on every render (identity macros left for the end,
    comments of plain text, argument-less `{{trim}}`), and how many evaluations they spend."""

    text: str
    count: int
    macros: tuple[Macro, ...]


@dataclass(frozen=True, slots=True)
class _Call:
    """A known macro whose argument count is right: its handler, looked up once."""

    handler: Callable[[Any, Macro], str]
    macro: Macro


@dataclass(frozen=True, slots=True)
class _Draw:
    """`{{random}}` whose arguments are plain text: its choices, split once (two or more)."""

    macro: Macro
    items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Read:
    """`{{getvar::name}}` / `{{getglobalvar::name}}` with a plain name without a dot."""

    macro: Macro
    key: str
    glob: bool


@dataclass(frozen=True, slots=True)
class _Write:
    """`{{setvar::name::value}}` / `{{setglobalvar::…}}` of a plain name and plain value: both trimmed once."""

    macro: Macro
    key: str
    value: str
    glob: bool


def _constant_form(macro: Macro, source: str) -> str | None:
    """What `_Pass.macro` gives `macro` on every render, when that never depends on anything (as
    `static_text` reads a whole text); None otherwise."""
    name = macro.name
    if name == "//" and not macro.args:
        return "" if all(piece.__class__ is str for piece in macro.body) else None
    if name == "trim" and not macro.args:
        return TRIM_MARK
    if name in IDENTITY_MACROS and name not in HANDLERS:
        return _identity_form(macro, source)
    return None


def _plain_args(macro: Macro) -> list[str] | None:
    """The macro's arguments as `_Pass.arg` renders them, when each is plain text; None otherwise."""
    texts = []
    for arg in macro.args:
        if not arg:
            texts.append("")
        elif len(arg) == 1 and arg[0].__class__ is str:
            texts.append(arg[0])  # type: ignore[arg-type]
        else:
            return None
    return texts


def _fold(template: CompiledText) -> tuple[object, ...]:
    """The template's top-level parts with what can be worked out once worked out: runs of constant
    macros become their text (`_Const`), known macros their handler (`_Call`), `{{random}}` over plain
    choices its split choices (`_Draw`), `{{getvar}}` of a plain name its key (`_Read`). Made once per
    text (kept on the compiled text), so a preset version compiles its evaluation once."""
    folded: list[object] = []
    run: list[Macro] = []
    texts: list[str] = []

    def close() -> None:
        if run:
            folded.append(_Const("".join(texts), len(run), tuple(run)))
            run.clear()
            texts.clear()

    for part in template.parts:
        if part.__class__ is not Macro:
            close()
            folded.append(part)
            continue
        macro: Macro = part  # type: ignore[assignment]
        constant = _constant_form(macro, template.source)
        if constant is not None:
            run.append(macro)
            texts.append(constant)
            continue
        close()
        dispatch = _DISPATCH.get(macro.name)
        if dispatch is None:
            folded.append(macro)
            continue
        handler, arity = dispatch
        if arity is not None and not arity[0] <= len(macro.args) <= arity[1]:
            folded.append(macro)  # warns on every render
            continue
        args = _plain_args(macro)
        if handler is HANDLERS["random"] and args is not None:
            items = split_choices(args) if args else []
            if len(items) >= 2:
                folded.append(_Draw(macro, tuple(items)))
                continue
        if handler is HANDLERS["getvar"] and args is not None and len(args) == 1:
            key = args[0].strip()
            if key and "." not in key:
                folded.append(_Read(macro, key, "global" in macro.name))
                continue
        if handler is HANDLERS["setvar"] and args is not None and len(args) == 2:
            key, value = args[0].strip(), args[1].replace(TRIM_MARK, "").strip()
            if key and len(value) <= MAX_TEXT_CHARS:
                folded.append(_Write(macro, key, value, "global" in macro.name))
                continue
        folded.append(_Call(handler, macro))
    close()
    return tuple(folded)


@dataclass(frozen=True, slots=True)
class _Kept:
    """A segment's render (`_Pass.render_kept`): the variables it read with the values they had (ABSENT:
    none), the env fields it read with their values, the variables it changed with the values it left
    (ABSENT: deleted), what it spent and reported, its output."""

    local_keys: tuple[str, ...]  # the keys read, and their values in the same order
    local_values: tuple[Any, ...]
    global_keys: tuple[str, ...]
    global_values: tuple[Any, ...]
    fields: tuple[tuple[str, Any], ...]
    local_set: dict[str, Any]  # the keys set and the values left
    local_deleted: tuple[str, ...]
    global_set: dict[str, Any]
    global_deleted: tuple[str, ...]
    spent: int
    warnings: tuple[str, ...]
    unknown: tuple[str, ...]
    output: SegmentOutput


def _writes(writes: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A segment's writes as `_Kept` holds them: the values left, and the keys deleted."""
    return (
        {key: value for key, value in writes.items() if value is not ABSENT},
        tuple(key for key, value in writes.items() if value is ABSENT),
    )


class _FieldsEnv:
    """A MacroEnv that notes each field read through it, with its value, in `fields`."""

    __slots__ = ("_env", "fields")

    def __init__(self, env: MacroEnv, fields: dict[str, Any]) -> None:
        self._env = env
        self.fields = fields

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._env, name)
        if name not in self.fields:
            self.fields[name] = value
        return value


class _TooLarge(Exception):
    """Raised when the text being built passes MAX_TEXT_CHARS; the enclosing loop or node stays verbatim."""


class _Pass:
    """One walk over the segments; holds the variables, the draw counters and what was reported."""

    def __init__(
        self,
        env: MacroEnv,
        seed: int,
        moment: datetime | None,
        start_local: dict[str, Any],
        start_global: dict[str, Any],
        drawn: dict[DrawKey, int],
        *,
        label: bool,
        read: set[str] | None = None,
    ) -> None:
        self.env = env
        self.plain_env = env  # `env` without a wrapper that notes reads (render_segments sets it)
        self.seed = seed
        self._moment = moment
        self.read = set() if read is None else read  # besides the env's fields: the clock, the seed
        self.local = Namespace(start_local)
        self.global_ = Namespace(start_global)
        self.label = label
        self.warnings: list[str] = []
        self.unknown: dict[str, None] = {}  # an ordered set: reported in the order first met
        self.evaluations = 0
        self.exhausted = False
        self.loops: list[tuple[Any, Any]] = []
        self.each_depth = 0
        self.block_depth = 0
        self.key = ""
        self.source = ""
        self.draws: dict[int, int] = {}
        self._base: int | None = None
        self.drawn = drawn
        self.expanded: set[str] = set()
        self.volatile = False  # the segment being rendered drew or read the clock
        self.new_unknown: list[str] | None = None  # the unknown macros it met, while it may be kept

    def render_kept(self, segment: Segment) -> SegmentOutput:
        """`render(segment)`, or what its last render gave when the variables it read then hold the same
        values now and the env fields it read are equal: a segment that draws nothing and reads no clock
        renders the same from the same inputs (the same text, writes, warnings and unknown macros, the
        same evaluations spent). Its writes are made again, in the namespaces as they are now."""
        if not segment.template.macro_names.isdisjoint(_DRAWING) or self.exhausted:
            return self.render(segment)
        kept: _Kept | None = segment.kept.get(self.label)
        env = self.env
        if kept is not None and self.evaluations + kept.spent <= MAX_EVALUATIONS:
            keys = kept.local_keys
            global_keys = kept.global_keys
            if (
                (not keys or tuple(map(self.local.values.get, keys, repeat(ABSENT))) == kept.local_values)
                and (
                    not global_keys
                    or tuple(map(self.global_.values.get, global_keys, repeat(ABSENT))) == kept.global_values
                )
                and (not kept.fields or self.same_fields(kept.fields))
            ):
                self.evaluations += kept.spent
                if kept.local_set:  # strings only (kept so): one update, in C
                    namespace = self.local
                    namespace.values.update(kept.local_set)
                    if namespace.others:
                        namespace.others.difference_update(kept.local_set)
                if kept.global_set:
                    namespace = self.global_
                    namespace.values.update(kept.global_set)
                    if namespace.others:
                        namespace.others.difference_update(kept.global_set)
                for key in kept.local_deleted:
                    self.local.delete(key)
                for key in kept.global_deleted:
                    self.global_.delete(key)
                self.warnings += kept.warnings
                for name in kept.unknown:
                    self.unknown[name] = None
                return kept.output
        if not (self.local.texts_only and self.global_.texts_only):
            return self.render(segment)
        fields: dict[str, Any] = {}
        self.env = _FieldsEnv(env, fields)  # type: ignore[assignment]
        self.volatile, self.new_unknown = False, []
        warned, spent = len(self.warnings), self.evaluations
        local_ns, global_ns = self.local, self.global_
        local_reads: dict[str, Any] = {}
        local_writes: dict[str, Any] = {}
        global_reads: dict[str, Any] = {}
        global_writes: dict[str, Any] = {}
        local_ns.reads, local_ns.writes = local_reads, local_writes
        global_ns.reads, global_ns.writes = global_reads, global_writes
        try:
            output = self.render(segment)
        finally:
            self.env = env
            local_ns.reads = local_ns.writes = global_ns.reads = global_ns.writes = None
        unknown, self.new_unknown = self.new_unknown, None
        if not self.volatile and not self.exhausted and local_ns.texts_only and global_ns.texts_only:
            segment.kept[self.label] = _Kept(
                tuple(local_reads),
                tuple(local_reads.values()),
                tuple(global_reads),
                tuple(global_reads.values()),
                tuple((name, frozen_value(value)) for name, value in fields.items()),
                *_writes(local_writes),
                *_writes(global_writes),
                self.evaluations - spent,
                tuple(self.warnings[warned:]),
                tuple(unknown),
                output,
            )
        return output

    def same_fields(self, fields: tuple[tuple[str, Any], ...]) -> bool:
        """Whether the env's fields hold these values; read from the plain env, the names then noted
        as read as the env would note them (render_segments' memo)."""
        plain = self.plain_env
        for name, value in fields:
            if getattr(plain, name) != value:
                return False
        if plain is not self.env:
            self.read.update(name for name, _ in fields)
        return True

    # -- driving ---------------------------------------------------------------------------------

    def render(self, segment: Segment) -> SegmentOutput:
        template: CompiledText = segment.template
        key = segment.key
        if template.warnings:
            for warning in template.warnings:
                self.warn(warning, key)
        if not template.has_macros:
            return SegmentOutput(key, template.source)
        self.key, self.source = key, template.source
        if self.draws:  # each segment counts its own draws and expansions (most have none)
            self.draws = {}
        if self.expanded:
            self.expanded = set()
        self._base = None
        folded = template.folded
        if folded is None:
            folded = _fold(template)
            object.__setattr__(template, "folded", folded)
        try:
            text = self.folded(folded)
        except _TooLarge:
            text = ""
            too_large = True
        else:
            too_large = len(text) > MAX_TEXT_CHARS
        if TRIM_MARK in text:
            text = _apply_trim(text)
        if too_large:
            self.warn("The rendered text is longer than the 1 MiB limit; the node was left verbatim.")
            return SegmentOutput(key, template.source)
        return SegmentOutput(key, text, frozenset(self.expanded) if self.expanded else _NONE_EXPANDED)

    @property
    def moment(self) -> datetime:
        self.read.add(CLOCK)
        self.volatile = True
        if self._moment is None:
            self._moment = local_now(self.env.now, self.env.timezone)[0]
        return self._moment

    @property
    def base(self) -> int:
        """The segment's draw seed, worked out at its first draw."""
        self.volatile = True
        if self._base is None:
            self.read.add(SEED)
            self._base = draw_seed(self.seed, self.key)
        return self._base

    def warn(self, message: str, key: str | None = None) -> None:
        if self.label:
            message = f'In "{key if key is not None else self.key}": {message}'
        self.warnings.append(message)

    def parts(self, parts: Parts) -> str:
        if len(parts) == 1:
            first = parts[0]
            if type(first) is str:
                return first
        out: list[str] = []
        produced = 0
        for part in parts:
            if type(part) is str:
                out.append(part)
                continue
            piece = self.macro(part) if type(part) is Macro else self.block(part)  # type: ignore[arg-type]
            produced += len(piece)
            if produced > MAX_TEXT_CHARS:  # stop before memory grows: 10k getvars of a 1 MiB value...
                raise _TooLarge
            out.append(piece)
        return "".join(out)

    def folded(self, parts: tuple[object, ...]) -> str:
        """`parts(template.parts)` over the template's folded parts (`_fold`): the same text, evaluations,
        draws, writes and warnings, with what never changes worked out once."""
        out: list[str] = []
        produced = 0
        for part in parts:
            kind = type(part)
            if kind is str:
                out.append(part)  # type: ignore[arg-type]
                continue
            if kind is _Call:
                macro = part.macro  # type: ignore[attr-defined]
                self.evaluations += 1
                if self.evaluations > MAX_EVALUATIONS:
                    self.evaluations -= 1
                    piece = self.macro(macro)  # warns once, left as written
                else:
                    piece = part.handler(self, macro)  # type: ignore[attr-defined]
            elif kind is _Draw:
                self.evaluations += 1
                if self.evaluations > MAX_EVALUATIONS:
                    self.evaluations -= 1
                    piece = self.macro(part.macro)  # type: ignore[attr-defined]
                else:
                    piece = self.draw(part)  # type: ignore[arg-type]
            elif kind is _Write:
                self.evaluations += 1
                if self.evaluations > MAX_EVALUATIONS:
                    self.evaluations -= 1
                    piece = self.macro(part.macro)  # type: ignore[attr-defined]
                else:
                    (self.global_ if part.glob else self.local).write(part.key, part.value)  # type: ignore[attr-defined]
                    piece = ""
            elif kind is _Read:
                self.evaluations += 1
                if self.evaluations > MAX_EVALUATIONS:
                    self.evaluations -= 1
                    piece = self.macro(part.macro)  # type: ignore[attr-defined]
                else:
                    piece = self.read_var(part)  # type: ignore[arg-type]
            elif kind is _Const:
                if (
                    self.evaluations + part.count <= MAX_EVALUATIONS  # type: ignore[attr-defined]
                    and produced + len(part.text) <= MAX_TEXT_CHARS  # type: ignore[attr-defined]
                ):
                    self.evaluations += part.count  # type: ignore[attr-defined]
                    produced += len(part.text)  # type: ignore[attr-defined]
                    out.append(part.text)  # type: ignore[attr-defined]
                    continue
                for macro in part.macros:  # type: ignore[attr-defined]
                    piece = self.macro(macro)  # one by one, as `parts` does near a limit
                    produced += len(piece)
                    if produced > MAX_TEXT_CHARS:
                        raise _TooLarge
                    out.append(piece)
                continue
            elif kind is Macro:
                piece = self.macro(part)  # type: ignore[arg-type]
            else:
                piece = self.block(part)  # type: ignore[arg-type]
            produced += len(piece)
            if produced > MAX_TEXT_CHARS:
                raise _TooLarge
            out.append(piece)
        return "".join(out)

    def draw(self, part: _Draw) -> str:
        """`{{random}}` over choices known when the text was compiled: `handlers._random` without
        rendering and splitting its arguments again (the same draw from the same seed)."""
        macro, items = part.macro, part.items
        start = macro.start
        count = self.draws.get(start, 0)
        self.draws[start] = count + 1
        draw = (1, self.key, start, count, len(items))
        index = self.drawn.get(draw)
        if index is None:
            index = self.drawn[draw] = draw_below(self.base, 1, start, count, len(items))
        return items[index]

    def read_var(self, part: _Read) -> str:
        """`{{getvar::name}}` of a name known when the text was compiled (no dot: a flat key)."""
        value = (self.global_ if part.glob else self.local).get(part.key)
        return value if type(value) is str else to_text(value)

    def raw(self, node: Macro | EachBlock | Scoped | IfBlock | Variable) -> str:
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
        dispatch = _DISPATCH.get(macro.name)
        if dispatch is not None:
            handler, arity = dispatch
            if arity is not None and not arity[0] <= len(macro.args) <= arity[1]:
                return self.wrong_arity(macro, arity)
            return handler(self, macro)
        if macro.name in IDENTITY_MACROS:
            return _identity_form(macro, self.source)
        if macro.name:
            self.unknown[macro.name] = None
            if self.new_unknown is not None:
                self.new_unknown.append(macro.name)
        if macro.single:
            return "{" + self.parts(macro.body) + "}"
        return "{{" + self.parts(macro.body) + "}}"

    def wrong_arity(self, macro: Macro, arity: tuple[int, int]) -> str:
        low, high = arity
        takes = f"{low}" if low == high else f"{low} or {high}"
        self.warn(
            f"{{{{{macro.name}}}}} with {len(macro.args)} argument(s) (it takes {takes}) was left as written, "
            "as SillyTavern 1.18 leaves it."
        )
        return self.raw(macro)

    def block(self, node: EachBlock | Scoped | IfBlock | Variable) -> str:
        """Everything but a plain macro: `each` loops and the Macros 2.0 nodes (docs/macros.md#macros-20)."""
        if type(node) is EachBlock:
            return self.each(node)
        if type(node) is Scoped:
            return render_scoped(self, node)
        if not self.spend():
            return self.raw(node)
        if type(node) is Variable:
            return render_variable(self, node)
        if self.block_depth >= MAX_NESTING:
            self.warn(f"`if` blocks nested deeper than {MAX_NESTING} levels were left verbatim.")
            return self.raw(node)
        self.block_depth += 1
        try:
            return render_if(self, node)
        finally:
            self.block_depth -= 1

    def call(self, name: str) -> str:
        """A known macro evaluated without arguments (`{{if description}}`); a content macro read
        only to test a condition does not count as expanded into the prompt."""
        expanded = set(self.expanded)
        try:
            return HANDLERS[name](self, Macro(name, 0, 0))
        finally:
            self.expanded = expanded

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
                if piece is None or total > MAX_TEXT_CHARS:
                    self.warn("An `each` loop produced more than 1 MiB of text; it was left verbatim.")
                    return self.raw(block)
                out.append(piece)
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

    def lookup(self, namespace: Namespace, key: str) -> Any:
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
        return namespace.get(key)  # the flat key (what `namespace.read` finds), in one step

    def key_of(self, macro: Macro) -> str:
        key = self.arg(macro, 0).strip()
        if not key:
            self.warn(f"`{macro.name}` without a variable name was ignored.")
        return key
