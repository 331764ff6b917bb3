"""Fold opening and closing tags among siblings into blocks (`each`, docs/macros.md#macros; scoped
macros, docs/macros.md#macros-20).

An opening tag is paired with the nearest following closing tag of the same name at the same nesting
level (`{{if a}}…{{if b}}…{{/if}}…{{/if}}` nests). An opener without its closing tag stays an ordinary
macro; a closing tag without its opener stays in the text. Texts without any closing tag are returned
as they are, so Macros 1.0 text pays nothing for this.
"""

from __future__ import annotations

from .catalog import COMMENT_CLOSE, PRESERVING, SCOPED_ARGS
from .nodes import MAX_NESTING, EachBlock, IfBlock, Macro, Part, Parts, Scoped

# Grouping stops this deep (rendering already refuses blocks nested past MAX_NESTING, with a warning).
_MAX_GROUP_DEPTH = 2 * MAX_NESTING
# closing tag name -> the opener it closes
_CLOSES = {f"/{name}": name for name in SCOPED_ARGS if name != "//"} | {"/each": "each", COMMENT_CLOSE: "//"}


def group_blocks(parts: list[Part] | tuple[Part, ...], depth: int = 0) -> Parts:
    """`parts` with every matched opening/closing pair folded into one block node.

    Past _MAX_GROUP_DEPTH nested blocks the tags stay ordinary macros (so parsing never recurses
    without bound)."""
    if depth >= _MAX_GROUP_DEPTH or not any(type(part) is Macro and part.name in _CLOSES for part in parts):
        return tuple(parts)
    waiting: dict[str, list[int]] = {}
    closer_of: dict[int, int] = {}
    for index, part in enumerate(parts):
        if type(part) is not Macro:
            continue
        opens = _CLOSES.get(part.name)
        if opens is not None:
            stack = waiting.get(opens)
            if stack:
                closer_of[stack.pop()] = index
        elif _is_opener(part):
            name = part.name
            waiting.setdefault(PRESERVING.get(name, name), []).append(index)
    if not closer_of:
        return tuple(parts)
    out: list[Part] = []
    index = 0
    while index < len(parts):
        close = closer_of.get(index)
        if close is None:
            out.append(parts[index])
            index += 1
            continue
        # Pairs nested inside are found again when the content is grouped; a pair that crosses this
        # one's boundary is broken, its tags left as they are (SillyTavern pairs outermost first).
        out.append(_block(parts[index], group_blocks(parts[index + 1 : close], depth + 1), parts[close]))  # type: ignore[arg-type]
        index = close + 1
    return tuple(out)


def _is_opener(macro: Macro) -> bool:
    if macro.single:
        return False
    name = macro.name
    if name == "each":
        return True
    if name == "//":
        return len(macro.body) == 1 and macro.body[0].strip() == "//"  # type: ignore[union-attr]
    wanted = SCOPED_ARGS.get(PRESERVING.get(name, name))
    return wanted is not None and len(macro.args) == wanted


def _block(opener: Macro, body: Parts, closer: Macro) -> Part:
    start, end = opener.start, closer.end
    name = PRESERVING.get(opener.name, opener.name)
    if name == "each":
        return EachBlock(start, end, opener, body)
    if name == "//":
        return Macro("//", start, end, body=body)
    if name == "if":
        negate, condition = split_negation(opener.args[0])
        then, otherwise = split_else(body)
        return IfBlock(start, end, condition, negate, then, otherwise, opener.preserve)
    content = Scoped(opener.end, closer.start, body, opener.preserve)
    return Macro(name, start, end, args=(*opener.args, (content,)))


def split_negation(condition: Parts) -> tuple[bool, Parts]:
    """(negated, condition without its leading `!`) for `{{if !cond}}`."""
    head = condition[0] if condition else ""
    if type(head) is str and head.lstrip().startswith("!"):
        rest = head.lstrip()[1:].lstrip()
        return True, ((rest,) if rest else ()) + condition[1:]
    return False, condition


def split_else(content: Parts) -> tuple[Parts, Parts | None]:
    """The branches of an `{{if}}`: split at its first `{{else}}` (nested `{{if}}`s keep their own)."""
    for index, part in enumerate(content):
        if type(part) is Macro and part.name == "else":
            return content[:index], content[index + 1 :]
    return content, None
