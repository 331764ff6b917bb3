"""Sample dialogues as SillyTavern 1.18 sends them with a preset
(docs/assembly.md#what-sillytavern-118-corrected).

Each sample block becomes the rendered `new_example_chat_prompt` as a system message (none when it
renders empty), then one system message per turn, named `example_user` or `example_assistant`.
Turns are found the way SillyTavern finds them: after the block's heading line, a line that starts
with "<user name>:" opens a user turn and one that starts with "<character name>:" a character turn;
any other line continues the turn it is in, and lines before the first speaker join the first turn.
Only the first "<name>:" of a turn is removed.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence

from ..buckets import DocumentMemo
from ..macros import resolve_identity
from ..parts import Item, Part, setting_source
from ..providers import EXAMPLE_ASSISTANT, EXAMPLE_USER

SAMPLE_TAG = "DIALOGUE_SAMPLE"
_SINGLE_RANDOM = re.compile(r"(?<!\{)\{random", re.IGNORECASE)


def example_turns(
    block: str, *, user: str, char: str, members: Sequence[str] | None = None
) -> list[tuple[str, str]]:
    """The (name, text) turns of one sample block whose identity macros are already resolved.

    In a group (`members`: every member's name) each turn is named in its text too (`User: `,
    `Name: `), and a line that starts with another member's `Name:` opens a character turn spoken
    by that member; as in SillyTavern 1.18, a later line of the speaker's own does not switch back."""
    turns: list[tuple[str, str]] = []
    lines: list[str] = []
    speaker = ""  # "user" | "char" | "" before the first speaker line
    user_prefix, char_prefix = f"{user}:", f"{char}:"
    member_prefixes = tuple(f"{name}:" for name in members or ())
    bot = char

    def close(kind: str) -> None:
        name = user if kind == "user" else bot
        text = "\n".join(lines).replace(f"{name}:", "", 1).strip()
        if members is not None:
            text = f"{name}: {text}"
        turns.append((EXAMPLE_USER if kind == "user" else EXAMPLE_ASSISTANT, text))
        lines.clear()

    # The block as SillyTavern holds it: a heading line, the trimmed block, a final newline.
    for line in f"\n{block.strip()}\n".split("\n")[1:]:
        if line.startswith(user_prefix):
            if speaker == "char":
                close("char")
            speaker = "user"
        elif line.startswith(char_prefix) or line.startswith(member_prefixes):
            if not line.startswith(char_prefix) and member_prefixes:
                bot = line.split(":", 1)[0]
            if speaker == "user":
                close("user")
            speaker = "char"
        lines.append(line)
    if speaker:
        close(speaker)
    return turns


def example_items(
    items: Sequence[Item],
    *,
    separator: str,
    user: str,
    char: str,
    seed: int,
    kept: DocumentMemo | None = None,
    members: tuple[str, ...] | None = None,
) -> list[Item]:
    """`items` with every sample dialogue item replaced by SillyTavern's messages for it: the
    separator (when not empty) and one named system item per turn, all in the item's group.

    `kept` (a document's memo) keeps each item's messages for the same separator and names, unless
    its text holds a single-brace random form (those depend on the seed). `members` (a group's
    names) makes the turns group turns (see `example_turns`); it also keeps the whole run's result
    when every sample dialogue in it was kept, so the same run costs one look-up."""
    if kept is not None:
        run_key = (separator, user, char, members, *map(id, items))
        found_run = kept.example_runs.get(run_key)
        if found_run is not None and all(map(operator.is_, found_run[0], items)):
            return list(found_run[1])
    out: list[Item] = []
    every_kept = kept is not None
    for item in items:
        if item.tag != SAMPLE_TAG:
            out.append(item)
            continue
        if kept is None:
            out.extend(_messages(item, separator, user, char, seed, members))
            continue
        key = (id(item), separator, user, char, members)
        found = kept.examples.get(key)
        if found is not None and found[0] is item:
            out.extend(found[1])
            continue
        made = _messages(item, separator, user, char, seed, members)
        if not any(part.trusted and _SINGLE_RANDOM.search(part.text) for part in item.parts):
            kept.examples[key] = (item, made)  # the item is kept alive with them, so its id stays unique
            kept.kept.update(map(id, made))  # the document keeps them (reuse.py)
        else:
            every_kept = False
        out.extend(made)
    if every_kept and kept is not None:
        if len(kept.example_runs) >= 16:
            kept.example_runs.clear()
        kept.example_runs[run_key] = (tuple(items), tuple(out))  # the run's items kept alive with it
    return out


def _messages(
    item: Item, separator: str, user: str, char: str, seed: int, members: tuple[str, ...] | None
) -> list[Item]:
    out: list[Item] = []
    if separator:
        part = Part(separator, (setting_source("new_example_chat_prompt"),), True)
        out.append(Item(SAMPLE_TAG, "system", (part,), group=item.group, squash=False))
    sources = tuple(dict.fromkeys(s for part in item.parts for s in part.sources))
    transforms = tuple(t for part in item.parts for t in part.transforms)
    text = "".join(
        resolve_identity(part.text, user=user, char=char, seed=seed) if part.trusted else part.text
        for part in item.parts
    )
    for name, turn in example_turns(text, user=user, char=char, members=members):
        if turn:
            part = Part(turn, sources, False, transforms)
            out.append(Item(SAMPLE_TAG, "system", (part,), group=item.group, name=name, squash=False))
    return out
