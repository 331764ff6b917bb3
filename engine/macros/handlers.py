"""What each macro renders as: one handler per name, taking the running pass and the macro node.

The pass (`render._Pass`) owns the state: variables, loops, draws, warnings. Handlers read and
write it through its small interface (`arg`, `rest`, `lookup`, `key_of`, `warn`, `raw`, `parts`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .clock import clock_macro, format_moment, idle_duration
from .dice import choose, parse_roll, roll, split_choices, stream_for
from .parser import MAX_TEXT_CHARS, Macro
from .paths import PathError, get_path, split_path
from .values import added, as_collection, js_number_text, stepped, to_text

if TYPE_CHECKING:
    from .render import _Namespace, _Pass

# {{trim}} renders this placeholder; the pass removes it with the line breaks around it at the end.
TRIM_MARK = "\x00trim\x00"


def _namespace(state: _Pass, macro: Macro) -> _Namespace:
    return state.global_ if "global" in macro.name else state.local


def _clean(value: str) -> str:
    return value.replace(TRIM_MARK, "") if TRIM_MARK in value else value


def _too_long(state: _Pass, macro: Macro, size: int) -> bool:
    """True (with a warning) when a variable would grow past MAX_TEXT_CHARS characters."""
    if size <= MAX_TEXT_CHARS:
        return False
    state.warn(f"`{macro.name}` would store more than 1 MiB of text; it was left verbatim.")
    return True


def _setvar(state: _Pass, macro: Macro) -> str:
    key = state.key_of(macro)
    value = _clean(state.rest(macro, 1))
    if _too_long(state, macro, len(value)):
        return state.raw(macro)
    if key:
        _namespace(state, macro).write(key, value)
    return ""


def _addvar(state: _Pass, macro: Macro) -> str:
    key = state.key_of(macro)
    addition = _clean(state.rest(macro, 1))
    if not key:
        return ""
    namespace = _namespace(state, macro)
    current = namespace.values.get(key)
    array = current if isinstance(current, list) else None
    if array is None and isinstance(current, str):
        parsed = as_collection(current)
        array = parsed if isinstance(parsed, list) else None
    if array is not None:
        size = len(addition) + sum(len(item) if isinstance(item, str) else 16 for item in array)
        if _too_long(state, macro, size):
            return state.raw(macro)
        namespace.write(key, [*array, addition])
        return ""
    value = added(current, addition)
    if isinstance(value, str) and _too_long(state, macro, len(value)):
        return state.raw(macro)
    namespace.write(key, value)
    return ""


def _incvar(state: _Pass, macro: Macro) -> str:
    key = state.key_of(macro)
    if not key:
        return ""
    namespace = _namespace(state, macro)
    current = namespace.values.get(key)
    new = stepped(current, -1 if macro.name.startswith("dec") else 1)
    if new is None:
        state.warn(
            f"`{macro.name}` on {key!r}, which holds text rather than a number; it was left unchanged."
        )
        return ""
    namespace.write(key, new)
    return js_number_text(new)


def _getvar(state: _Pass, macro: Macro) -> str:
    key = state.arg(macro, 0).strip()
    return to_text(state.lookup(_namespace(state, macro), key)) if key else ""


def _deletevar(state: _Pass, macro: Macro) -> str:
    key = state.key_of(macro)
    if key:
        _namespace(state, macro).delete(key)
    return ""


def _comment(state: _Pass, macro: Macro) -> str:
    state.parts(macro.body)  # nested macros still run, silently (as in SillyTavern)
    return ""


def _draw_index(state: _Pass, macro: Macro) -> int:
    count = state.draws.get(macro.start, 0)
    state.draws[macro.start] = count + 1
    return count


def _random(state: _Pass, macro: Macro) -> str:
    items = split_choices([state.parts(arg) for arg in macro.args]) if macro.args else []
    if len(items) < 2:
        return items[0] if items else ""
    draw = (1, state.key, macro.start, _draw_index(state, macro), len(items))
    index = state.drawn.get(draw)
    if index is None:
        index = state.drawn[draw] = stream_for(state.base, 1, macro.start, draw[3]).below(len(items))
    return items[index]


def _pick(state: _Pass, macro: Macro) -> str:
    items = split_choices([state.parts(arg) for arg in macro.args]) if macro.args else []
    return choose(items, "pick", state.env.server_id, state.key, macro.start)


def _roll(state: _Pass, macro: Macro) -> str:
    formula = state.rest(macro, 0)
    spec = parse_roll(formula)
    if spec is None:
        state.warn(
            f"The roll {formula.strip()!r} is not a dice formula such as 2d6+1; it rendered as nothing."
        )
        return ""
    if spec.problem:
        state.warn(spec.problem)
    occurrence = _draw_index(state, macro)
    draw = (2, state.key, macro.start, occurrence, formula)  # the formula text: its hash is cached
    total = state.drawn.get(draw)
    if total is None:
        total = state.drawn[draw] = roll(spec, stream_for(state.base, 2, macro.start, occurrence))
    return str(total)


def _content(field: str, label: str | None = None) -> Callable[[_Pass, Macro], str]:
    def handler(state: _Pass, macro: Macro) -> str:
        text = getattr(state.env, field)
        if text and label:
            state.expanded.add(label)
        return text

    return handler


def _clock(state: _Pass, macro: Macro) -> str:
    return clock_macro(macro.name, state.moment)


def _datetimeformat(state: _Pass, macro: Macro) -> str:
    return format_moment(state.moment, state.rest(macro, 0).strip())


def _idle_duration(state: _Pass, macro: Macro) -> str:
    return idle_duration(state.env.user_message_times)


def _loop_key(state: _Pass, macro: Macro) -> str:
    if not state.loops:
        return state.raw(macro)
    return to_text(state.loops[-1][0])


def _loop_value(state: _Pass, macro: Macro) -> str:
    if not state.loops:
        return state.raw(macro)
    value = state.loops[-1][1]
    path = state.arg(macro, 0).strip()
    if not path:
        return to_text(value)
    collection = as_collection(value)
    if collection is None:
        return ""
    try:
        found, inner = get_path(collection, split_path(path))
    except PathError as error:
        state.warn(str(error))
        return ""
    return to_text(inner) if found else ""


def _unpaired(state: _Pass, macro: Macro) -> str:
    other = "{{/each}}" if macro.name == "each" else "{{each}}"
    state.warn(f"`{{{{{macro.name}}}}}` without a matching {other} was left verbatim.")
    return state.raw(macro)


def _constant(text: str) -> Callable[[_Pass, Macro], str]:
    return lambda _state, _macro: text


HANDLERS: dict[str, Callable[[_Pass, Macro], str]] = {
    "//": _comment,
    "setvar": _setvar,
    "setglobalvar": _setvar,
    "addvar": _addvar,
    "addglobalvar": _addvar,
    "incvar": _incvar,
    "incglobalvar": _incvar,
    "decvar": _incvar,
    "decglobalvar": _incvar,
    "getvar": _getvar,
    "getglobalvar": _getvar,
    "deletevar": _deletevar,
    "deleteglobalvar": _deletevar,
    "random": _random,
    "pick": _pick,
    "roll": _roll,
    "trim": _constant(TRIM_MARK),
    "newline": _constant("\n"),
    "noop": _constant(""),
    "scenario": _constant(""),
    "persona": _constant(""),
    "personality": _content("personality", "personality"),
    "description": _content("description", "description"),
    "mesexamples": _content("mes_examples", "mesExamples"),
    "mesexamplesraw": _content("mes_examples_raw", "mesExamples"),
    "summary": _content("summary", "summary"),
    "lastchatmessage": _content("last_user_message"),
    "lastusermessage": _content("last_user_message"),
    "lastmessage": _content("last_message"),
    "lastcharmessage": _content("last_char_message"),
    "time": _clock,
    "date": _clock,
    "weekday": _clock,
    "isotime": _clock,
    "isodate": _clock,
    "datetimeformat": _datetimeformat,
    "idle_duration": _idle_duration,
    "loop_key": _loop_key,
    "loop_value": _loop_value,
    "each": _unpaired,
    "/each": _unpaired,
}
