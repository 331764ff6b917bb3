"""Who answers next in a group (docs/groups.md, "Who speaks next"): the members to generate for,
in order, decided by the group's activation strategy the way SillyTavern 1.18 decides it in the
browser, with our seeded source for its random draws.

The bot sends the channel's last messages. When the last one is a user's, it is the input that
triggered the turn (SillyTavern's typed input): mentions are read in it and nobody is barred. When it
is a member's or a narrator line's (role `system`; the bot letting the group go on by itself,
SillyTavern's auto mode), its author may not answer itself unless the group allows it, and the
members it names answer as a user's mentions do (SillyTavern's narrator messages are not system
messages to its activation).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .model import Group

DEFAULT_TALKATIVENESS = 0.5  # SillyTavern's default for a card that does not say

_WORD = re.compile(r"\b\w+\b", re.ASCII)  # JavaScript's \w and \b are ASCII-only


@dataclass(frozen=True, slots=True)
class ChatLine:
    """One message of the channel as the next-speaker decision reads it."""

    role: str  # "user" | "assistant" | "system" (a narrator line)
    name: str
    content: str


def words(text: str) -> list[str]:
    """The lower-cased words of `text`, as SillyTavern splits a message to find mentions."""
    return [match.group(0).lower() for match in _WORD.finditer(text or "")]


def talkativeness(extensions: dict[str, Any]) -> float:
    """A card's chance to speak up unprompted, read as SillyTavern reads it (a number, or text that
    is one; anything else takes the default)."""
    value = extensions.get("talkativeness") if isinstance(extensions, dict) else None
    if value is None or isinstance(value, bool):
        return DEFAULT_TALKATIVENESS
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip()
        try:
            number = float(text) if text else 0.0  # JavaScript's Number("") is 0
        except ValueError:
            return DEFAULT_TALKATIVENESS
    else:
        return DEFAULT_TALKATIVENESS
    return DEFAULT_TALKATIVENESS if math.isnan(number) else number


def next_speakers(group: Group, messages: Sequence[ChatLine], seed: int) -> list[str]:
    """The names of the members to answer next, in order (possibly none), for `group`'s strategy
    given the channel's last `messages` (oldest first); random draws come from `seed`."""
    draw = random.Random(seed)
    enabled = [member.name for member in group.members if not member.muted]
    last = messages[-1] if messages else None
    user_turn = last is None or last.role == "user"
    if group.strategy == "list":
        return _unique(enabled)
    if group.strategy == "pooled":
        return _pooled(enabled, messages, user_turn, draw)
    if group.strategy == "manual":
        # SillyTavern waits for the user; only when the group goes on by itself does one member,
        # drawn at random, answer.
        return [] if user_turn or not enabled else [draw.choice(enabled)]
    return _natural(group, enabled, last, user_turn, draw)


def _natural(
    group: Group, enabled: list[str], last: ChatLine | None, user_turn: bool, draw: random.Random
) -> list[str]:
    barred = None if user_turn or group.allow_self_responses or last is None else last.name
    trigger_text = "" if last is None else last.content
    # Each word of the message stands for the first member (in the group's order) whose name has
    # it; the index makes that one lookup per word instead of a walk over the members' names.
    named_by: dict[str, str] = {}
    for name in enabled:
        if name != barred:
            for word in words(name):
                named_by.setdefault(word, name)
    chosen = _unique([named_by[word] for word in words(trigger_text) if word in named_by])
    chance = {member.name: talkativeness(member.card.extensions) for member in group.members}
    chatty: list[str] = []
    shuffled = list(enabled)
    draw.shuffle(shuffled)
    for name in shuffled:
        if name == barred:
            continue
        if chance[name] >= draw.random():
            chosen.append(name)
        if chance[name] > 0:
            chatty.append(name)
    if not chosen and enabled:  # nobody spoke up: one at random, preferring those who ever do
        chosen.append(draw.choice(chatty or enabled))
    return _unique(chosen)


def _pooled(
    enabled: list[str], messages: Sequence[ChatLine], user_turn: bool, draw: random.Random
) -> list[str]:
    if not enabled:
        return []
    spoken: set[str] = set()
    if not user_turn:
        for line in reversed(messages):
            if line.role == "user":
                break
            if line.role == "assistant":
                spoken.add(line.name)
    waiting = [name for name in enabled if name not in spoken]
    if waiting:
        return [draw.choice(waiting)]
    last = messages[-1] if messages else None
    pool = enabled
    if len(enabled) > 1 and last is not None and last.role != "user":
        pool = [name for name in enabled if name != last.name] or enabled
    return [draw.choice(pool)]


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))
