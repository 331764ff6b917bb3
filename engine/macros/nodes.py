"""The parse tree: text runs, macros and the blocks the parser folds them into. Frozen and picklable."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import final

MAX_NESTING = 32  # macros inside macros, and blocks inside blocks (docs/macros.md#limits)


@final  # the renderer dispatches on type(part) is Macro
@dataclass(frozen=True, slots=True)
class Macro:
    """One `{{name...}}` (or single-brace `{random...}`) with its source span `[start, end)`.

    Known macros carry `args` (the text after the name, split on `::`); comments and unknown
    macros carry `body` (everything between the braces) instead. A scoped macro
    (`{{setvar::x}}…{{/setvar}}`) has its content as its last argument, one `Scoped` part. An opening
    tag written `{{#name}}` keeps the `#` in its name (its content then keeps its whitespace).
    """

    name: str
    start: int
    end: int
    args: tuple[Parts, ...] = ()
    body: Parts = ()
    single: bool = False

    @property
    def scoped(self) -> bool:
        """True when the last argument came from a scope (`{{name}}…{{/name}}`)."""
        return bool(self.args) and len(self.args[-1]) == 1 and self.args[-1][0].__class__ is Scoped

    @property
    def preserve(self) -> bool:
        """True for an opening tag written `{{#name}}`."""
        return self.name[:1] == "#"


@final
@dataclass(frozen=True, slots=True)
class EachBlock:
    """`{{each::coll}}body{{/each}}`; `start`/`end` span the whole block."""

    start: int
    end: int
    opener: Macro
    body: Parts


@final
@dataclass(frozen=True, slots=True)
class Scoped:
    """The content of a scoped macro, its last argument: dedented and trimmed once rendered,
    unless the opening tag was written `{{#name}}` (`preserve`)."""

    start: int
    end: int
    parts: Parts
    preserve: bool = False


@final
@dataclass(frozen=True, slots=True)
class IfBlock:
    """`{{if cond}}then{{else}}otherwise{{/if}}`: only the branch the condition picks is rendered."""

    start: int
    end: int
    condition: Parts
    negate: bool  # `{{if !cond}}`
    then: Parts
    otherwise: Parts | None  # None without `{{else}}`
    preserve: bool = False


@final
@dataclass(frozen=True, slots=True)
class Variable:
    """The variable shorthand: `{{.name}}` (local) or `{{$name}}` (global), optionally with an
    operator (`=`, `+=`, `-=`, `++`, `--`, `||`, `??`, `||=`, `??=`, `==`, `!=`, `>`, `>=`, `<`, `<=`)
    and the value after it (rendered only when the operator needs it)."""

    start: int
    end: int
    scope: str  # "." or "$"
    name: str
    op: str  # "" for a plain read
    value: Parts = ()


Part = str | Macro | EachBlock | Scoped | IfBlock | Variable
Parts = tuple[Part, ...]


def children(node: Part) -> Iterator[Parts]:
    """Every run of parts directly inside `node` (arguments, bodies, branches, values)."""
    if isinstance(node, Macro):
        yield from node.args
        yield node.body
    elif isinstance(node, EachBlock):
        yield from children(node.opener)
        yield node.body
    elif isinstance(node, Scoped):
        yield node.parts
    elif isinstance(node, IfBlock):
        yield node.condition
        yield node.then
        if node.otherwise is not None:
            yield node.otherwise
    elif isinstance(node, Variable):
        yield node.value
