"""Group chats (docs/groups.md): the group as the engine sees it, and the speaker's card."""

from .model import GENERATION_MODES, MAX_MEMBERS, STRATEGIES, Group, GroupMember, GroupTurn
from .nudge import group_nudge, without_node_text
from .speaker import SpeakerCard, group_document, speaker_card, speaker_name

__all__ = [
    "GENERATION_MODES",
    "MAX_MEMBERS",
    "STRATEGIES",
    "Group",
    "GroupMember",
    "GroupTurn",
    "SpeakerCard",
    "group_document",
    "group_nudge",
    "speaker_card",
    "speaker_name",
    "without_node_text",
]
