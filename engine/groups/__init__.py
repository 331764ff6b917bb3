"""Group chats (docs/groups.md): the group as the engine sees it."""

from .model import GENERATION_MODES, MAX_MEMBERS, STRATEGIES, Group, GroupMember, GroupTurn

__all__ = ["GENERATION_MODES", "MAX_MEMBERS", "STRATEGIES", "Group", "GroupMember", "GroupTurn"]
