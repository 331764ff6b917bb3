"""Group chats (docs/groups.md): the group as the engine sees it, who answers next, and the tools
that let members address each other."""

from .model import GENERATION_MODES, MAX_MEMBERS, STRATEGIES, Group, GroupMember, GroupTurn
from .next import DEFAULT_TALKATIVENESS, ChatLine, next_speakers, talkativeness
from .tools import TOOL_NAMES, group_tools, with_group_tools

__all__ = [
    "DEFAULT_TALKATIVENESS",
    "GENERATION_MODES",
    "MAX_MEMBERS",
    "STRATEGIES",
    "TOOL_NAMES",
    "ChatLine",
    "Group",
    "GroupMember",
    "GroupTurn",
    "group_tools",
    "next_speakers",
    "talkativeness",
    "with_group_tools",
]
