"""Group chats (docs/groups.md): the group as the engine sees it, the speaker's card, who
answers next, and the tools that let members address each other."""

from .model import GENERATION_MODES, MAX_MEMBERS, STRATEGIES, Group, GroupMember, GroupTurn
from .next import DEFAULT_TALKATIVENESS, ChatLine, next_speakers, talkativeness
from .speaker import SpeakerCard, group_document, speaker_card, speaker_name
from .tools import (
    AGENT_CONTEXT_MAX_CHARS,
    AUTHORS_NOTE_MAX_CHARS,
    DICE_FORMULA_MAX_CHARS,
    RECALL_QUERY_MAX_CHARS,
    TOOL_NAMES,
    group_tools,
    with_group_tools,
)

__all__ = [
    "AGENT_CONTEXT_MAX_CHARS",
    "AUTHORS_NOTE_MAX_CHARS",
    "DEFAULT_TALKATIVENESS",
    "DICE_FORMULA_MAX_CHARS",
    "GENERATION_MODES",
    "MAX_MEMBERS",
    "RECALL_QUERY_MAX_CHARS",
    "STRATEGIES",
    "TOOL_NAMES",
    "ChatLine",
    "Group",
    "GroupMember",
    "GroupTurn",
    "SpeakerCard",
    "group_document",
    "group_tools",
    "next_speakers",
    "speaker_card",
    "speaker_name",
    "talkativeness",
    "with_group_tools",
]
