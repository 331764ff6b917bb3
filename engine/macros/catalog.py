"""Which macro names the engine knows, by family."""

from __future__ import annotations

# Left in the text by the engine and replaced at the very end by `resolve_identity`.
IDENTITY_MACROS = frozenset({"user", "char", "bot", "group", "charifnotgroup"})

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
    }
)

CLOCK_MACROS = frozenset({"time", "date", "weekday", "isotime", "isodate", "datetimeformat", "idle_duration"})

# Loop macros are known everywhere; outside an `each` they stay verbatim without being reported.
LOOP_MACROS = frozenset({"each", "/each", "loop_key", "loop_value"})

OTHER_MACROS = frozenset({"//", "random", "pick", "roll", "trim", "newline", "noop"})

KNOWN_MACROS = IDENTITY_MACROS | VARIABLE_MACROS | CONTENT_MACROS | CLOCK_MACROS | LOOP_MACROS | OTHER_MACROS


def find_unsupported_macros(text: str) -> frozenset[str]:
    """Return the lower-cased names of the macros in `text` that the engine does not know."""
    from .parser import compile_text  # the parser imports this module for its name table

    return compile_text(text).unknown_names
