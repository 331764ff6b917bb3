"""What each macro renders as: one handler per name, taking the running pass and the macro node.

The pass owns the state: variables, loops, draws, warnings. Handlers read and write it through
`state.MacroState` (`arg`, `rest`, `lookup`, `key_of`, `warn`, `raw`, `parts`, `call`). `HANDLERS`
is the one table to extend with a new macro (add its name to `catalog.py` too).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta, timezone

from .catalog import ALIASES, CLOSING_TAGS, PRESERVING, REQUEST_MACROS
from .clock import clock_macro, format_moment, idle_duration, time_diff
from .dice import choose, parse_roll, roll, split_choices, stream_for
from .flow import if_macro
from .nodes import Macro, Scoped
from .parser import MAX_TEXT_CHARS
from .paths import PathError, get_path, split_path
from .state import MacroState, Namespace
from .values import as_collection, to_text
from .variables import add_to, step, too_long

MAX_REPEAT = 1000  # {{space::N}}, {{newline::N}}
_UTC_OFFSET = re.compile(r"utc([+-]\d{1,2})", re.IGNORECASE)

# {{trim}} renders this placeholder; the pass removes it with the line breaks around it at the end.
TRIM_MARK = "\x00trim\x00"


def _namespace(state: MacroState, macro: Macro) -> Namespace:
    return state.global_ if "global" in macro.name else state.local


def _clean(value: str) -> str:
    return value.replace(TRIM_MARK, "") if TRIM_MARK in value else value


def _scoped(macro: Macro) -> bool:
    """True for `{{setvar::x}}…{{/setvar}}`: the value is the content between the tags."""
    return bool(macro.args) and any(isinstance(part, Scoped) for part in macro.args[-1])


def _setvar(state: MacroState, macro: Macro) -> str:
    key = state.key_of(macro)
    value = _clean(state.rest(macro, 1))
    if not _scoped(macro):  # SillyTavern 1.18 trims an inline value (scoped content has its own rule)
        value = value.strip()
    if len(value) > MAX_TEXT_CHARS and too_long(state, macro.name, len(value)):
        return state.raw(macro)
    if key:
        _namespace(state, macro).write(key, value)
    return ""


def _addvar(state: MacroState, macro: Macro) -> str:
    key = state.key_of(macro)
    addition = _clean(state.rest(macro, 1))
    if not _scoped(macro):
        addition = addition.strip()
    if not key:
        return ""
    return "" if add_to(state, _namespace(state, macro), key, addition, macro.name) else state.raw(macro)


def _incvar(state: MacroState, macro: Macro) -> str:
    key = state.key_of(macro)
    if not key:
        return ""
    new = step(state, _namespace(state, macro), key, -1 if macro.name.startswith("dec") else 1, macro.name)
    return state.raw(macro) if new is None else to_text(new)


def _getvar(state: MacroState, macro: Macro) -> str:
    key = state.arg(macro, 0).strip()
    return to_text(state.lookup(_namespace(state, macro), key)) if key else ""


def _deletevar(state: MacroState, macro: Macro) -> str:
    key = state.key_of(macro)
    if key:
        _namespace(state, macro).delete(key)
    return ""


def _comment(state: MacroState, macro: Macro) -> str:
    state.parts(macro.body)  # nested macros still run, silently (as in SillyTavern)
    return ""


def _draw_index(state: MacroState, macro: Macro) -> int:
    count = state.draws.get(macro.start, 0)
    state.draws[macro.start] = count + 1
    return count


def _random(state: MacroState, macro: Macro) -> str:
    items = split_choices([state.parts(arg) for arg in macro.args]) if macro.args else []
    if len(items) < 2:
        return items[0] if items else ""
    draw = (1, state.key, macro.start, _draw_index(state, macro), len(items))
    index = state.drawn.get(draw)
    if index is None:
        index = state.drawn[draw] = stream_for(state.base, 1, macro.start, draw[3]).below(len(items))
    return items[index]


def _pick(state: MacroState, macro: Macro) -> str:
    items = split_choices([state.parts(arg) for arg in macro.args]) if macro.args else []
    return choose(items, "pick", state.env.server_id, state.key, macro.start)


def _roll(state: MacroState, macro: Macro) -> str:
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


def _content(field: str, label: str | None = None) -> Callable[[MacroState, Macro], str]:
    def handler(state: MacroState, macro: Macro) -> str:
        text: str = getattr(state.env, field)
        if text and label:
            state.expanded.add(label)
        return text

    return handler


def _greeting(state: MacroState, macro: Macro) -> str:
    """{{greeting}} / {{charFirstMessage}}: the first message; {{greeting::n}} the n-th alternate one."""
    index = state.arg(macro, 0).strip() if macro.args else "0"
    if not index.isdigit() or int(index) == 0:
        return state.env.first_message
    greetings = state.env.alternate_greetings
    return greetings[int(index) - 1] if int(index) <= len(greetings) else ""


def _clock(state: MacroState, macro: Macro) -> str:
    moment = state.moment
    if macro.name == "time" and macro.args:  # {{time::UTC+2}} (and the old {{time_UTC+2}})
        spec = state.arg(macro, 0).strip()
        offset = _UTC_OFFSET.fullmatch(spec)
        if offset is not None and abs(int(offset.group(1))) <= 14:
            moment = moment.astimezone(timezone(timedelta(hours=int(offset.group(1)))))
        elif offset is not None:
            state.warn(f"{spec} is not a UTC offset (at most 14 hours); the local time was used.")
    return clock_macro(macro.name, moment)


def _outlet(state: MacroState, macro: Macro) -> str:
    """docs/worldinfo.md#placement: the text of the World Info entries placed in the named outlet ("" when
    none)."""
    return state.env.outlets.get(state.arg(macro, 0).strip(), "")


def _datetimeformat(state: MacroState, macro: Macro) -> str:
    return format_moment(state.moment, state.rest(macro, 0).strip())


def _idle_duration(state: MacroState, macro: Macro) -> str:
    return idle_duration(state.env.user_message_times)


# SillyTavern 1.18's default system prompt and context-template separators (its settings for a new
# user), which its {{systemPrompt}}, {{defaultSystemPrompt}}, {{exampleSeparator}} and {{chatStart}}
# print; the system prompt as written, its own macros left in (docs/macros.md).
DEFAULT_SYSTEM_PROMPT = (
    r"Write \{\{char\}\}'s next reply in a fictional chat between \{\{char\}\} and \{\{user\}\}."
)
DEFAULT_SEPARATOR = "***"
# The SillyTavern extensions `{{hasExtension::name}}` reports as present: the ones the engine does.
EXTENSIONS = frozenset({"regex"})


def _request(state: MacroState, macro: Macro) -> str:
    """The macros about the request and its chat, as SillyTavern 1.18 renders them for a chat's first
    generation in a browser that is not a phone, with nothing typed in its input box."""
    env, name = state.env, ALIASES.get(macro.name, macro.name)
    count = env.history_count
    if name == "model":
        return env.model
    if name == "maxcontext":
        return str(env.max_context)
    if name == "maxresponse":
        return str(env.max_response)
    if name == "maxprompt":
        return str(env.max_context - env.max_response)
    if name == "ismobile":
        return "false"
    if name == "lastmessageid":
        return str(count - 1) if count else ""
    if name == "firstdisplayedmessageid":
        return "0" if count else ""
    if name == "allchatrange":
        return f"0-{count - 1}" if count else ""
    if name == "lastgenerationtype":
        return env.generation_type
    if name == "systemprompt":
        return env.char_prompt or DEFAULT_SYSTEM_PROMPT
    if name == "defaultsystemprompt":
        return DEFAULT_SYSTEM_PROMPT
    if name in ("exampleseparator", "chatstart"):
        return DEFAULT_SEPARATOR
    if name == "hasextension":
        return "true" if state.arg(macro, 0).strip() in EXTENSIONS else "false"
    if name == "timediff":
        return time_diff(state.arg(macro, 0), state.arg(macro, 1))
    # input, firstIncludedMessageId (recorded only after a generation), the swipe ids, banned, and
    # the instruct macros render empty
    return ""


def _last_chat_message(state: MacroState, macro: Macro) -> str:
    """{{lastChatMessage}}: the message being continued, in the continue nudge; elsewhere SillyTavern
    1.18 does not know it and sends it as written."""
    text = state.env.last_chat_message
    return state.raw(macro) if text is None else text


def _loop_key(state: MacroState, macro: Macro) -> str:
    if not state.loops:
        return state.raw(macro)
    return to_text(state.loops[-1][0])


def _loop_value(state: MacroState, macro: Macro) -> str:
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


def _unpaired(state: MacroState, macro: Macro) -> str:
    other = "{{/each}}" if macro.name == "each" else "{{each}}"
    state.warn(f"`{{{{{macro.name}}}}}` without a matching {other} was left verbatim.")
    return state.raw(macro)


def _constant(text: str) -> Callable[[MacroState, Macro], str]:
    return lambda _state, _macro: text


def _trim(state: MacroState, macro: Macro) -> str:
    if macro.args and macro.scoped:  # {{trim}}…{{/trim}}: the content, trimmed like any scoped content
        return state.arg(macro, len(macro.args) - 1)
    return TRIM_MARK


def _repeat(text: str) -> Callable[[MacroState, Macro], str]:
    """{{space}} / {{newline}}, optionally repeated: {{space::4}}."""

    def handler(state: MacroState, macro: Macro) -> str:
        count = state.arg(macro, 0).strip() if macro.args else ""
        if not count:
            return text
        if not count.isdigit():
            state.warn(f"`{{{{{macro.name}::{count}}}}}` needs a whole number; one was used.")
            return text
        return text * min(int(count), MAX_REPEAT)

    return handler


def _hasvar(state: MacroState, macro: Macro) -> str:
    key = state.key_of(macro)
    return "true" if key and _namespace(state, macro).read(key)[0] else "false"


def _reverse(state: MacroState, macro: Macro) -> str:
    return state.rest(macro, 0)[::-1]  # by code point, as JavaScript's Array.from(text)


def _closing_tag(state: MacroState, macro: Macro) -> str:
    return state.raw(macro)  # a closing tag without its opening tag is text


HANDLERS: dict[str, Callable[[MacroState, Macro], str]] = {
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
    "trim": _trim,
    "newline": _repeat("\n"),
    "space": _repeat(" "),
    "noop": _constant(""),
    "scenario": _content("scenario"),
    "persona": _content("persona"),
    "personality": _content("personality", "personality"),
    "description": _content("description", "description"),
    "mesexamples": _content("mes_examples", "mesExamples"),
    "mesexamplesraw": _content("mes_examples_raw", "mesExamples"),
    "summary": _content("summary", "summary"),
    "charprompt": _content("char_prompt"),
    "charinstruction": _content("char_instruction"),
    "chardepthprompt": _content("char_depth_prompt"),
    "charcreatornotes": _content("creator_notes"),
    "charfirstmessage": _greeting,
    "charversion": _content("char_version"),
    "lastchatmessage": _last_chat_message,
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
    "outlet": _outlet,
    "loop_key": _loop_key,
    "loop_value": _loop_value,
    "each": _unpaired,
    "/each": _unpaired,
    "if": if_macro,
    "else": _constant(""),  # only meaningful inside {{if}}; elsewhere it disappears, as in SillyTavern
    "hasvar": _hasvar,
    "hasglobalvar": _hasvar,
    "reverse": _reverse,
    "reasoningprefix": _content("reasoning_prefix"),
    "reasoningsuffix": _content("reasoning_suffix"),
}
HANDLERS.update(dict.fromkeys(REQUEST_MACROS, _request))
HANDLERS.update(dict.fromkeys(CLOSING_TAGS, _closing_tag))
HANDLERS.update({flagged: HANDLERS[name] for flagged, name in PRESERVING.items()})
HANDLERS.update({alias: HANDLERS[name] for alias, name in ALIASES.items()})
