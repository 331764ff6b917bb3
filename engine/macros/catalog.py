"""Which macro names the engine knows, by family."""

from __future__ import annotations

# Left in the text by the engine and replaced at the very end by `resolve_identity`.
IDENTITY_MACROS = frozenset({"user", "char", "bot", "group", "charifnotgroup", "groupnotmuted", "notchar"})

VARIABLE_MACROS = frozenset(
    {
        "setvar",
        "addvar",
        "incvar",
        "decvar",
        "getvar",
        "deletevar",
        "setglobalvar",
        "addglobalvar",
        "incglobalvar",
        "decglobalvar",
        "getglobalvar",
        "deleteglobalvar",
    }
)

CONTENT_MACROS = frozenset(
    {
        "personality",
        "description",
        "scenario",
        "persona",
        "mesexamples",
        "mesexamplesraw",
        "lastchatmessage",
        "lastusermessage",
        "lastmessage",
        "lastcharmessage",
        "summary",
        "outlet",
    }
)

CLOCK_MACROS = frozenset({"time", "date", "weekday", "isotime", "isodate", "datetimeformat", "idle_duration"})

# Loop macros are known everywhere; outside an `each` they stay verbatim without being reported.
LOOP_MACROS = frozenset({"each", "/each", "loop_key", "loop_value"})

OTHER_MACROS = frozenset({"//", "random", "pick", "roll", "trim", "newline", "noop"})

# Macros 2.0 (docs/macros.md#macros-20). `{{char…}}` aliases read the same text as the macro they alias.
ALIASES = {
    "chardescription": "description",
    "charpersonality": "personality",
    "charscenario": "scenario",
    "creatornotes": "charcreatornotes",
    "greeting": "charfirstmessage",
    "version": "charversion",
    "char_version": "charversion",
    "maxprompttokens": "maxprompt",
    "maxcontexttokens": "maxcontext",
    "maxresponsetokens": "maxresponse",
    "varexists": "hasvar",
    "flushvar": "deletevar",
    "globalvarexists": "hasglobalvar",
    "flushglobalvar": "deleteglobalvar",
    "idleduration": "idle_duration",
    "instructinput": "instructuserprefix",
    "instructoutput": "instructassistantprefix",
    "instructseparator": "instructassistantsuffix",
    "instructfirstoutputprefix": "instructfirstassistantprefix",
    "instructlastoutputprefix": "instructlastassistantprefix",
    "instructfirstinput": "instructfirstuserprefix",
    "instructlastinput": "instructlastuserprefix",
    "instructsystem": "defaultsystemprompt",
    "instructsystemprompt": "defaultsystemprompt",
    "chatseparator": "exampleseparator",
}
# SillyTavern 1.18's instruct-mode macros: empty while instruct mode is off, as it always is for a
# Chat Completion preset (docs/macros.md).
INSTRUCT_MACROS = frozenset(
    {
        "instructstorystringprefix",
        "instructstorystringsuffix",
        "instructuserprefix",
        "instructusersuffix",
        "instructassistantprefix",
        "instructassistantsuffix",
        "instructsystemprefix",
        "instructsystemsuffix",
        "instructfirstassistantprefix",
        "instructlastassistantprefix",
        "instructstop",
        "instructuserfiller",
        "instructsysteminstructionprefix",
        "instructfirstuserprefix",
        "instructlastuserprefix",
    }
)
# SillyTavern 1.18's macros about the request and its chat (docs/macros.md).
REQUEST_MACROS = frozenset(
    {
        "model",
        "maxprompt",
        "maxcontext",
        "maxresponse",
        "ismobile",
        "input",
        "lastmessageid",
        "firstincludedmessageid",
        "firstdisplayedmessageid",
        "lastswipeid",
        "currentswipeid",
        "allchatrange",
        "lastgenerationtype",
        "systemprompt",
        "defaultsystemprompt",
        "exampleseparator",
        "chatstart",
        "hasextension",
        "timediff",
        "banned",
        *INSTRUCT_MACROS,
    }
)
# The active card's fields beyond the content macros (SillyTavern 1.18's character macros).
CARD_MACROS = frozenset(
    {
        "charprompt",
        "charinstruction",
        "chardepthprompt",
        "charcreatornotes",
        "charfirstmessage",
        "charversion",
    }
)
MACROS_2 = frozenset(
    {
        "if",
        "else",
        "hasvar",
        "hasglobalvar",
        "reverse",
        "space",
        "reasoningprefix",
        "reasoningsuffix",
        *CARD_MACROS,
        *ALIASES,
        *REQUEST_MACROS,
    }
)

# Macros that take their last argument from a scope, `{{name args}}content{{/name}}`, and how many
# arguments the opening tag carries (`{{if cond}}`: 1; `{{trim}}`: 0). `//` is the scoped comment
# `{{//}}…{{///}}`; `each` keeps its own block rules (docs/macros.md#macros).
SCOPED_ARGS = {
    "//": 0,
    "if": 1,
    "trim": 0,
    "setvar": 1,
    "setglobalvar": 1,
    "addvar": 1,
    "addglobalvar": 1,
    "reverse": 0,
    "roll": 0,
    "datetimeformat": 0,
}
COMMENT_CLOSE = "///"
CLOSING_TAGS = frozenset({*(f"/{name}" for name in SCOPED_ARGS if name != "//"), COMMENT_CLOSE})
# `{{#name}}`: the same macro, whose scoped content keeps its whitespace.
PRESERVING = {f"#{name}": name for name in SCOPED_ARGS if name != "//"}

# Names recorded for the variable shorthand (`{{.x}}`, `{{$x = 1}}`); no macro can be called so (the
# parser ends a name at whitespace).
SHORTHAND_READ = "variable read"
SHORTHAND_WRITE = "variable write"

# Names `{{if name}}` evaluates as a macro: the known macros that make sense without arguments.
ARGUMENTLESS = (CONTENT_MACROS | CLOCK_MACROS | frozenset(ALIASES)) - {"datetimeformat"} | frozenset(
    {"newline", "noop", "space", "reasoningprefix", "reasoningsuffix"}
)

KNOWN_MACROS = (
    IDENTITY_MACROS
    | VARIABLE_MACROS
    | CONTENT_MACROS
    | CLOCK_MACROS
    | LOOP_MACROS
    | OTHER_MACROS
    | MACROS_2
    | CLOSING_TAGS
    | frozenset(PRESERVING)
    | {SHORTHAND_READ, SHORTHAND_WRITE}
)

# How many `::` arguments SillyTavern 1.18 accepts for the macros both engines know (a scope's content
# counts as one). Called with any other number, it sends the macro as written
# (docs/assembly.md#what-sillytavern-118-corrected); so do we. The list macros (`random`, `pick`, `roll`) and
# our own extensions are not checked.
ARITY: dict[str, tuple[int, int]] = {
    **dict.fromkeys(("setvar", "addvar", "setglobalvar", "addglobalvar"), (2, 2)),
    **dict.fromkeys(
        (
            "incvar", "decvar", "getvar", "deletevar", "hasvar",
            "incglobalvar", "decglobalvar", "getglobalvar", "deleteglobalvar", "hasglobalvar",
            "reverse", "outlet", "datetimeformat",
        ),
        (1, 1),
    ),
    **dict.fromkeys(("hasextension", "banned"), (1, 1)),
    "timediff": (2, 2),
    **dict.fromkeys(("time", "newline", "space", "trim", "charfirstmessage", "greeting"), (0, 1)),
    **dict.fromkeys(
        (
            "noop", "date", "weekday", "isotime", "isodate",
            "personality", "description", "scenario", "persona", "mesexamples", "mesexamplesraw",
            "lastmessage", "lastusermessage", "lastcharmessage",
            "chardescription", "charpersonality", "charscenario", "creatornotes", "version", "char_version",
            *CARD_MACROS - {"charfirstmessage"},
        ),
        (0, 0),
    ),
}  # fmt: skip
