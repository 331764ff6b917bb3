"""Group chats (docs/groups.md): the group as the engine sees it, and who answers next."""

from .model import GENERATION_MODES, MAX_MEMBERS, STRATEGIES, Group, GroupMember, GroupTurn
from .next import DEFAULT_TALKATIVENESS, ChatLine, next_speakers, talkativeness

__all__ = [
    "DEFAULT_TALKATIVENESS",
    "GENERATION_MODES",
    "MAX_MEMBERS",
    "STRATEGIES",
    "ChatLine",
    "Group",
    "GroupMember",
    "GroupTurn",
    "next_speakers",
    "talkativeness",
]
