"""The last step of a render: deferred identity macros, single-brace `{random}` forms, escaped braces."""

from __future__ import annotations

import re

from engine.bounded import MiB, text_cache

from .dice import choose, split_choices

_IDENTITY_MACRO = r"\{\{\s*(?i:(user|char|bot|group|charifnotgroup|groupnotmuted|notchar))\s*\}\}"
# Two patterns: the one without the angle forms starts with a literal `{{`, which the regex engine
# finds much faster. The angle forms are matched in any case, as SillyTavern 1.18 matches them
# (`<user>`, `<Bot>`, `<CHAR>`: docs/assembly.md#what-sillytavern-118-corrected).
_MACROS_ONLY = re.compile(_IDENTITY_MACRO)
_ANGLE = r"<(?i:(user|bot|char))>"
_ANGLES = re.compile(_ANGLE)
_MACROS_AND_ANGLES = re.compile(_IDENTITY_MACRO + "|" + _ANGLE)


class Speaker(str):
    """The speaker's display name in a group chat (docs/groups.md), carrying what the group macros
    read: `{{group}}` and `{{charIfNotGroup}}` every member, `{{groupNotMuted}}` the unmuted ones,
    `{{notChar}}` the unmuted ones but the speaker. A plain `str` name is a chat with one character:
    the first three are the character, `{{notChar}}` the user."""

    group: str
    not_muted: str
    others: str

    def __new__(cls, name: str, *, group: str, not_muted: str, others: str) -> Speaker:
        made = super().__new__(cls, name)
        made.group, made.not_muted, made.others = group, not_muted, others
        return made


def _name(form: str, user: str, char: str) -> str:
    """What an identity form (lowercase) resolves to."""
    if form == "user":
        return user
    if form in ("char", "bot") or not isinstance(char, Speaker):
        return user if form == "notchar" else char
    if form == "groupnotmuted":
        return char.not_muted
    return char.others if form == "notchar" else char.group


def has_angle_form(text: str) -> bool:
    """True when `text` holds `<user>`, `<bot>` or `<char>` in any case."""
    return "<" in text and _ANGLES.search(text) is not None


# Spelled with character classes rather than IGNORECASE so the engine can scan for the literal `{`.
# (A look-behind for "not after `{`" would disable that scan, so `{{random}}` is skipped in code.)
_SINGLE_RANDOM = re.compile(r"\{[rR][aA][nN][dD][oO][mM](?:\s*::?|\s+)")


def depends_on_seed(text: str) -> bool:
    """True when resolving `text` draws (it holds a single-brace `{random…}` form): its result then
    depends on the seed; every other text resolves the same for any seed."""
    return "{" in text and _SINGLE_RANDOM.search(text) is not None


def resolve_identity(text: str, *, user: str, char: str, seed: int = 0) -> str:
    """Return `text` with each single-brace `{random::a::b}` / `{random: a, b}` replaced by one seeded item,
    then {{user}} {{char}} {{bot}} {{group}} {{charIfNotGroup}} <USER> <BOT> <CHAR> replaced by the display
    names, and finally every escaped brace `\\{` / `\\}` turned into `{` / `}` (docs/macros.md#macros-20).

    The angle forms are matched in any case (docs/assembly.md#what-sillytavern-118-corrected); a macro right
    after a backslash (`\\{{user}}`) is escaped and stays as it is.
    """
    if "{" not in text and "<" not in text:
        return text
    if len(text) <= _PLAN_MAX_CHARS:
        plan = _names_plan(text)
        if plan is not None:
            if len(plan) == 1:
                return text
            out = list(plan)
            out[1::2] = [_name(slot, user, char) for slot in plan[1::2]]
            return "".join(out)
    escaped = "\\" in text

    def name_for(match: re.Match[str]) -> str:
        angle = match.group(2) if match.group(1) is None else None
        if angle is not None:
            return user if angle.lower() == "user" else char
        if escaped and match.start() and text[match.start() - 1] == "\\":
            return match.group(0)
        return _name(match.group(1).lower(), user, char)

    if "{" in text:  # before the names go in, so a display name cannot smuggle in a random form
        text = _resolve_single_random(text, seed)
    if has_angle_form(text):
        text = _MACROS_AND_ANGLES.sub(name_for, text)
    elif "{{" in text:
        text = _MACROS_ONLY.sub(name_for, text)
    return unescape_braces(text) if escaped else text


_FORMS = frozenset({"user", "char", "group", "charifnotgroup", "groupnotmuted", "notchar"})
_PLAN_MAX_CHARS = 16_384  # longer texts are resolved in full each time, not kept


@text_cache(max_entries=4096, max_bytes=32 * MiB, weight=2)
def _names_plan(text: str) -> tuple[str, ...] | None:
    """`text` cut around its identity forms, kept per text (preset and server texts recur on every
    assembly): literals at even positions, the identity forms (lowercase) at odd ones. None when the result
    depends on more than the names (a single-brace random form, an escaped brace)."""
    if "\\" in text or _resolve_single_random(text, 0) != text:
        return None
    pattern = _MACROS_AND_ANGLES if has_angle_form(text) else _MACROS_ONLY
    pieces: list[str] = []
    pos = 0
    for match in pattern.finditer(text):
        pieces.append(text[pos : match.start()])
        form = (match.group(1) or match.group(match.re.groups)).lower()  # a macro's, else an angle form's
        pieces.append(form if form in _FORMS else "char")
        pos = match.end()
    pieces.append(text[pos:])
    return tuple(pieces)


def unescape_braces(text: str) -> str:
    """`\\{` → `{` and `\\}` → `}`: the final pass over rendered text, after the identity macros."""
    if "\\" not in text:
        return text
    return text.replace("\\{", "{").replace("\\}", "}")


def _resolve_single_random(text: str, seed: int) -> str:
    out: list[str] = []
    pos = 0
    draw = 0
    search_from = 0
    while True:
        match = _SINGLE_RANDOM.search(text, search_from)
        if match is None:
            break
        search_from = match.start() + 1
        if match.start() and text[match.start() - 1] in "{\\":  # {{random}} is not ours; \\{ is text
            continue
        end = _matching_close(text, match.end())
        if end < 0:
            break
        out.append(text[pos : match.start()])
        out.append(choose(split_choices([text[match.end() : end]]), seed, "identity", match.start(), draw))
        draw += 1
        pos = search_from = end + 1
    out.append(text[pos:])
    return "".join(out)


def _matching_close(text: str, pos: int) -> int:
    """Index of the `}` closing a single-brace form whose content starts at `pos`, or -1."""
    depth = 0
    for index in range(pos, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return index
            depth -= 1
    return -1
