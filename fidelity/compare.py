"""Both sides made comparable, then compared message by message.

The deliberate differences (docs/fidelity.md#the-deliberate-differences) that a case can show are folded
first, each naming its item:
- item 1: our user history messages carry "Name: " in their text where SillyTavern's do not;
- item 4: SillyTavern sends whitespace-only messages, we do not;
- item 5: our note after trailing sample dialogues has no SillyTavern counterpart;
- item 1 again, under a tight budget: the names our user messages carry cost tokens, so the budget may
  keep fewer of the oldest history messages; folded when the messages SillyTavern kept beyond ours
  cost no more than our names did, and everything else is identical;
- item 9: `{{random}}`, `{{roll}}` and `{{pick}}` draw other values: our side is assembled with several
  seeds, and what changes between them is masked on both sides, everything around it compared.
SillyTavern's side is kept either in full (cases of our own text) or as one digest per message
(role, name, length and SHA-256 of the text), so a corpus file's text never enters the repository.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from engine import SAMPLE_NOTE

Message = dict[str, Any]


@dataclass
class Folded:
    messages: list[Message]
    folds: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (our text, folded) per named message

    def note(self, fold: str) -> None:
        if fold not in self.folds:
            self.folds.append(fold)


def fold_sillytavern(messages: Iterable[Message]) -> Folded:
    out = Folded([])
    for message in messages:
        if isinstance(message.get("content"), str) and not message["content"].strip():
            out.note("§11.1 item 4: a whitespace-only message SillyTavern sends is left out")
            continue
        out.messages.append({k: message[k] for k in ("role", "content", "name") if k in message})
    return out


def fold_ours(messages: Iterable[Message], *, speakers: Sequence[str], names_behavior: int = 0) -> Folded:
    """Our messages with the deliberate differences (docs/fidelity.md#the-deliberate-differences) folded;
    `names_behavior` is the preset's (with 2, SillyTavern writes the names into the text itself, so nothing is
    folded)."""
    out = Folded([])
    prefixes = tuple(f"{name}: " for name in speakers if name) if names_behavior in (-1, 0) else ()
    for message in messages:
        history = message.pop("_history", True)  # our_messages marks them; a bare list: every message
        content = message["content"]
        if content == SAMPLE_NOTE:
            out.note("§11.1 item 5: our note after the sample dialogues is left out")
            continue
        if (
            history
            and prefixes
            and message["role"] == "user"
            and "name" not in message
            and content.startswith(prefixes)
        ):
            out.renamed.append((content, content.split(": ", 1)[1]))
            content = out.renamed[-1][1]
            out.note("§11.1 item 1: the speaker's name in our user messages is left out")
        out.messages.append({**message, "content": content})
    return out


def digest(message: Message) -> Message:
    """A message as the repository keeps SillyTavern's side of a corpus case."""
    text = message["content"] if isinstance(message["content"], str) else str(message["content"])
    kept: Message = {"role": message["role"], "length": len(text)}
    if message.get("name"):
        kept["name"] = message["name"]
    kept["sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return kept


def first_difference(expected: Sequence[Message], ours: Sequence[Message], *, digests: bool) -> str | None:
    """None when the two lists match; else one readable paragraph about the first message that differs."""
    ours_cmp = [digest(m) for m in ours] if digests else [_plain(m) for m in ours]
    for index in range(max(len(expected), len(ours_cmp))):
        want = expected[index] if index < len(expected) else None
        got = ours_cmp[index] if index < len(ours_cmp) else None
        if want == got:
            continue
        return _describe(index, want, got, ours[index] if index < len(ours) else None, digests)
    return None


def _plain(message: Message) -> Message:
    return {k: message[k] for k in ("role", "content", "name") if k in message}


def _label(message: Message | None) -> str:
    if message is None:
        return "nothing"
    return message["role"] + (f" ({message['name']})" if message.get("name") else "")


def _describe(
    index: int, want: Message | None, got: Message | None, ours: Message | None, digests: bool
) -> str:
    head = f"message {index}: SillyTavern sent {_label(want)}, we sent {_label(got)}"
    if want is None or got is None:
        text = (ours or {}).get("content", "") if want is None else want.get("content", "")
        return f"{head}; {'ours' if want is None else 'theirs'}: {_snippet(text, 0)}"
    if digests:
        ours_text = (ours or {}).get("content", "")
        return f"{head}; lengths {want['length']} / {got['length']}; ours: {_snippet(ours_text, 0)}"
    a, b = want["content"], got["content"]
    at = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    return f"{head}; first differing character {at}:\n    theirs: {_snippet(a, at)}\n    ours:   {_snippet(b, at)}"


def _snippet(text: Any, at: int) -> str:
    text = str(text)
    start = max(0, at - 40)
    return repr(("…" if start else "") + text[start : at + 60] + ("…" if len(text) > at + 60 else ""))


DRAW = "⟨drawn⟩"
DRAW_FOLD = "§11.1 item 9: {count} drawn value(s) masked on both sides"
Mask = list[str]  # the text that stays put across seeds, in order; a draw between each two pieces


def draw_masks(runs: Sequence[Sequence[Message]]) -> list[Mask | None]:
    """Per message of `runs[0]`: the pieces every run (one per seed) agrees on, or None where all runs
    sent the same text. Runs that differ in shape (count, roles, names) give no masks."""
    first = runs[0]
    shapes = {
        tuple((m["role"], m.get("name", ""), isinstance(m["content"], str)) for m in run) for run in runs
    }
    if len(shapes) != 1:
        return [None] * len(first)
    masks: list[Mask | None] = []
    for index in range(len(first)):
        texts = [run[index]["content"] for run in runs]
        if not isinstance(texts[0], str) or all(text == texts[0] for text in texts):
            masks.append(None)
            continue
        masks.append(_stable_pieces(texts[0], texts[1:]))
    return masks


_TOKEN = re.compile(r"\w+|\W")


def _stable_pieces(base: str, others: Sequence[str]) -> Mask:
    """The runs of `base` every other text shares in place (compared word by word, after the common
    beginning and end are set aside), with a draw wherever one of them differs."""
    head = min(len(_common_prefix(base, other)) for other in others)
    tail = min(len(_common_prefix(base[head:][::-1], other[head:][::-1])) for other in others)
    middle = _TOKEN.findall(base[head : len(base) - tail])
    stable = [True] * len(middle)
    gaps: set[int] = set()  # token positions before which some text has something else
    for other in others:
        theirs = _TOKEN.findall(other[head : len(other) - tail])
        for op, i1, i2, _j1, _j2 in SequenceMatcher(None, middle, theirs, autojunk=False).get_opcodes():
            if op == "insert":
                gaps.add(i1)
            elif op != "equal":
                stable[i1:i2] = [False] * (i2 - i1)
    pieces, current, drawn = [], [base[:head]], False
    for at, token in enumerate(middle):
        if at in gaps or not stable[at]:
            if not drawn:
                pieces.append("".join(current))
                current, drawn = [], True
            if not stable[at]:
                continue
        current.append(token)
        drawn = False
    if len(middle) in gaps and not drawn:
        pieces.append("".join(current))
        current = []
    current.append(base[len(base) - tail :])
    pieces.append("".join(current))
    return pieces


def _common_prefix(a: str, b: str) -> str:
    return a[: next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))]


def masked_text(text: str, pieces: Mask) -> str | None:
    """`text` with each draw replaced by DRAW when the pieces around the draws match it, else None."""
    pattern = "[\\s\\S]*?".join(re.escape(piece) for piece in pieces)
    return DRAW.join(pieces) if re.fullmatch(pattern, text) else None


def apply_masks(messages: Sequence[Message], masks: Sequence[Mask | None]) -> tuple[list[Message], int]:
    """The messages with their draws masked where a mask fits; and how many draws were masked."""
    out, count = [], 0
    for index, message in enumerate(messages):
        mask = masks[index] if index < len(masks) else None
        content = message["content"]
        text = masked_text(content, mask) if mask is not None and isinstance(content, str) else None
        if mask is None or text is None:
            out.append(message)
            continue
        out.append({**message, "content": text})
        count += len(mask) - 1
    return out, count


TRIM_FOLD = (
    "§11.1 item 1: our user messages' names cost {names} tokens, so the budget kept {count} fewer of the "
    "oldest messages ({cost} tokens)"
)


def fold_trimmed(
    theirs: Sequence[Message], ours: Sequence[Message], *, name_tokens: int, cost: Callable[[Message], int]
) -> tuple[list[Message], str] | None:
    """SillyTavern's messages without the oldest history messages our budget left out because of the
    names (docs/fidelity.md#the-deliberate-differences, item 1), and the fold's note; None when that is not
    what differs."""
    extra = len(theirs) - len(ours)
    if extra <= 0:
        return None
    for at in range(len(ours) + 1):
        if list(theirs[:at]) == list(ours[:at]) and list(theirs[at + extra :]) == list(ours[at:]):
            left_out = theirs[at : at + extra]
            spent = sum(cost(m) for m in left_out)
            if all(m["role"] in ("user", "assistant") for m in left_out) and spent <= name_tokens:
                note = TRIM_FOLD.format(names=name_tokens, count=extra, cost=spent)
                return [*theirs[:at], *theirs[at + extra :]], note
            return None
    return None
