"""Writes for sample conversations (docs/conversations.md). Every change is audited with the variables it
changed.

New messages, new swipes and continuations are the only writes that extract ops; they run against
the state the earlier messages produce. Everything else (edit, delete, switching or deleting a
swipe, editing ops) just changes what survives: the state is always the replay, so it follows.
"""

from .changes import MAX_MESSAGE_CHARS, MAX_MESSAGES, MAX_NAME_CHARS, MAX_OPS, MAX_SWIPES, ConversationError
from .conversations import conversation_create, conversation_delete, conversation_import, conversation_rename
from .messages import message_add, message_continue, message_delete, message_edit
from .swipes import swipe_add, swipe_delete, swipe_select, swipe_set_ops

__all__ = [
    "MAX_MESSAGES",
    "MAX_MESSAGE_CHARS",
    "MAX_NAME_CHARS",
    "MAX_OPS",
    "MAX_SWIPES",
    "ConversationError",
    "conversation_create",
    "conversation_delete",
    "conversation_import",
    "conversation_rename",
    "message_add",
    "message_continue",
    "message_delete",
    "message_edit",
    "swipe_add",
    "swipe_delete",
    "swipe_select",
    "swipe_set_ops",
]
