"""A group (docs/groups.md): several cards answering in one channel, one speaker per reply.

These are the engine's inputs; the `groups` app builds a `Group` from storage and the bucket
document's `group` field parses into a `GroupTurn`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the cards package reads the bucket document, which reads this module
    from ..cards.card import Card  # the module alone: the cards package reads buckets

GENERATION_MODES = ("swap", "join_exclude_muted", "join_include_muted")
STRATEGIES = ("natural", "list", "pooled", "manual")
MAX_MEMBERS = 32


@dataclass(frozen=True, slots=True)
class GroupMember:
    """One member: a card of the server, muted or not."""

    card: Card
    muted: bool = False

    @property
    def name(self) -> str:
        return self.card.name


@dataclass(frozen=True, slots=True)
class Group:
    """A group as stored: its members in order and its settings."""

    name: str
    members: tuple[GroupMember, ...]
    mode: str = "swap"
    join_prefix: str = ""
    join_suffix: str = ""
    strategy: str = "natural"
    allow_self_responses: bool = False

    def member(self, name: str) -> GroupMember | None:
        """The member whose card is named `name`, or None."""
        for member in self.members:
            if member.card.name == name:
                return member
        return None


@dataclass(frozen=True, slots=True)
class GroupTurn:
    """The bucket document's `group`: which group, which member speaks, and the chat's overrides
    (SillyTavern's per-chat scenario and example overrides; None when not set)."""

    name: str
    speaker: str
    scenario_override: str | None = None
    examples_override: str | None = None
