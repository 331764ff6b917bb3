"""Macros 2.0 control flow (docs/macros.md#macros-20): `{{if}}`/`{{else}}`, scoped content and the variable
shorthand.

Only the branch an `{{if}}` picks is rendered, so the other branch's writes never happen; an
operator's value is rendered only when the operator needs it (`{{.x || {{setvar::y::1}}}}` sets y
only when x is falsy).
"""

from __future__ import annotations

import re

from .blocks import split_else, split_negation
from .catalog import ARGUMENTLESS
from .nodes import IfBlock, Macro, Parts, Scoped, Variable
from .state import MacroState
from .values import js_number, number_of, to_text
from .variables import add_to, step, store

FALSY = frozenset({"", "false", "off", "0"})
_SHORTHAND = re.compile(r"([.$])([A-Za-z](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)")
_COMPARE = {
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
}


def is_falsy(text: str) -> bool:
    """The falsy values of docs/macros.md#macros-20: empty, `false`, `off`, `0` (trimmed, any case)."""
    return text.strip().lower() in FALSY


def dedent_trim(text: str) -> str:
    """Scoped content as SillyTavern hands it on: every line loses the indentation of the first
    non-blank line (a line indented less loses all of its own), then the whole is trimmed."""
    lines = text.split("\n")
    indent = 0
    for line in lines:
        if line.strip():
            indent = len(line) - len(line.lstrip(" \t"))
            break
    if not indent:
        return text.strip()
    dedented = [
        line[indent:] if len(line) - len(line.lstrip(" \t")) >= indent else line.lstrip() for line in lines
    ]
    return "\n".join(dedented).strip()


def render_scoped(state: MacroState, node: Scoped) -> str:
    text = state.parts(node.parts)
    return text if node.preserve else dedent_trim(text)


def render_if(state: MacroState, block: IfBlock) -> str:
    return _choose(state, block.condition, block.negate, block.then, block.otherwise, block.preserve)


def if_macro(state: MacroState, macro: Macro) -> str:
    """The inline form `{{if cond::text}}` (text may hold `{{else}}`); an `{{if cond}}` whose
    `{{/if}}` is missing is left verbatim."""
    if len(macro.args) < 2:
        state.warn("`{{if}}` without a matching {{/if}} was left verbatim.")
        return state.raw(macro)
    negate, condition = split_negation(macro.args[0])
    content: Parts = macro.args[1]
    for arg in macro.args[2:]:
        content = (*content, "::", *arg)
    then, otherwise = split_else(content)
    return _choose(state, condition, negate, then, otherwise, macro.preserve)


def _choose(
    state: MacroState, condition: Parts, negate: bool, then: Parts, otherwise: Parts | None, preserve: bool
) -> str:
    truthy = not is_falsy(_condition_value(state, state.parts(condition)))
    branch = then if truthy != negate else otherwise
    if branch is None:
        return ""
    text = state.parts(branch)
    return text if preserve else dedent_trim(text)


def _condition_value(state: MacroState, text: str) -> str:
    """A rendered condition: `.name`/`$name` read a variable, a known argument-less macro name is
    evaluated (`description`), anything else is the text itself."""
    text = text.strip()
    shorthand = _SHORTHAND.fullmatch(text)
    if shorthand is not None:
        namespace = state.local if shorthand.group(1) == "." else state.global_
        return to_text(namespace.read(shorthand.group(2))[1])
    name = text.lower()
    if name in ARGUMENTLESS:
        return state.call(name)
    return text


def render_variable(state: MacroState, var: Variable) -> str:
    """`{{.x}}`, `{{$x}}` and their operators; assignments render "", `++`/`--` the new value."""
    namespace = state.local if var.scope == "." else state.global_
    key, op = var.name, var.op
    what = f"{var.scope}{key} {op}".rstrip()
    if op in ("++", "--"):
        new = step(state, namespace, key, 1 if op == "++" else -1, what)
        return state.raw(var) if new is None else to_text(new)
    if op == "=":
        return "" if store(state, namespace, key, _value(state, var), what) else state.raw(var)
    if op == "+=":
        return "" if add_to(state, namespace, key, _value(state, var), what) else state.raw(var)
    if op == "-=":
        amount = js_number(_value(state, var))
        if amount is None:
            state.warn(f"`{what}` needs a number; {var.scope}{key} was left unchanged.")
            return ""
        return "" if add_to(state, namespace, key, -amount, what) else state.raw(var)
    found, current = namespace.read(key)
    text = to_text(current)
    if not op:
        return text
    if op == "||":
        return _value(state, var) if is_falsy(text) else text
    if op == "??":
        return text if found else _value(state, var)
    if op in ("||=", "??="):
        if is_falsy(text) if op == "||=" else not found:
            value = _value(state, var)
            return value if store(state, namespace, key, value, what) else state.raw(var)
        return text
    if op in ("==", "!="):
        return "true" if (text == _value(state, var)) == (op == "==") else "false"
    value = _value(state, var)
    left, right = number_of(current), js_number(value)
    if left is None or right is None:
        state.warn(f"`{what} {value}` compares numbers, but {text!r} or {value!r} is not one; it is false.")
        return "false"
    return "true" if _COMPARE[op](left, right) else "false"


def _value(state: MacroState, var: Variable) -> str:
    return state.parts(var.value).strip()
