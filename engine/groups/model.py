"""A group (docs/groups.md): several cards answering in one channel, one speaker per reply.

These are the engine's inputs; the `groups` app builds a `Group` from storage. The bucket
document's `group` field parses into a `GroupTurn`, which the document's module defines (every
package reads the document; the document reads no package).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..buckets import GroupTurn

if TYPE_CHECKING:
    from ..cards import Card

GENERATION_MODES = ("swap", "join_exclude_muted", "join_include_muted")
STRATEGIES = ("natural", "list", "pooled", "manual")
MAX_MEMBERS = 32

__all__ = ["GENERATION_MODES", "MAX_MEMBERS", "STRATEGIES", "Group", "GroupMember", "GroupTurn"]


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
