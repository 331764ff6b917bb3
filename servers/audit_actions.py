"""Every action the audit log records, declared once. The stored value is the code that filters,
exports and the audit page's words (servers/templatetags/audit.py) read; a new kind of change adds
its member here, and `AuditEvent.record` refuses a code that is not one."""

from __future__ import annotations

from django.db import models


class AuditAction(models.TextChoices):
    CARD_ACTIVATE = "card.activate"
    CARD_DEACTIVATE = "card.deactivate"
    CARD_DELETE = "card.delete"
    CARD_IMPORT = "card.import"
    CARD_REPLACE = "card.replace"

    CHANNEL_FORGET = "channel.forget"
    CHANNEL_MEMBER_FORGET = "channel.member_forget"
    CHANNEL_SETTINGS = "channel.settings"

    CONVERSATION_CREATE = "conversation.create"
    CONVERSATION_DELETE = "conversation.delete"
    CONVERSATION_IMPORT = "conversation.import"
    CONVERSATION_MESSAGE_ADD = "conversation.message_add"
    CONVERSATION_MESSAGE_CONTINUE = "conversation.message_continue"
    CONVERSATION_MESSAGE_DELETE = "conversation.message_delete"
    CONVERSATION_MESSAGE_EDIT = "conversation.message_edit"
    CONVERSATION_OPS_EDIT = "conversation.ops_edit"
    CONVERSATION_RENAME = "conversation.rename"
    CONVERSATION_SWIPE_ADD = "conversation.swipe_add"
    CONVERSATION_SWIPE_DELETE = "conversation.swipe_delete"
    CONVERSATION_SWIPE_SELECT = "conversation.swipe_select"

    GROUP_AUTHORS_NOTE = "group.authors_note"
    GROUP_AUTHORS_NOTE_CLEAR = "group.authors_note.clear"
    GROUP_CHANNEL_CLEAR = "group.channel.clear"
    GROUP_CHANNEL_SET = "group.channel.set"
    GROUP_CREATE = "group.create"
    GROUP_DELETE = "group.delete"
    GROUP_DICE = "group.dice"
    GROUP_NOTE = "group.note"
    GROUP_NOTE_CLEAR = "group.note.clear"
    GROUP_REPLACE = "group.replace"
    GROUP_TRIGGER = "group.trigger"

    LOREBOOK_ACTIVATE = "lorebook.activate"
    LOREBOOK_DEACTIVATE = "lorebook.deactivate"
    LOREBOOK_DELETE = "lorebook.delete"
    LOREBOOK_ENTRIES_DISABLE = "lorebook.entries_disable"
    LOREBOOK_ENTRIES_ENABLE = "lorebook.entries_enable"
    LOREBOOK_IMPORT = "lorebook.import"
    LOREBOOK_REPLACE = "lorebook.replace"
    LOREBOOK_SETTINGS = "lorebook.settings"

    MEMBERSHIP_REMOVE = "membership.remove"
    MEMBERSHIP_SET = "membership.set"

    PRESET_ACTIVATE = "preset.activate"
    PRESET_CHANNEL_CLEAR = "preset.channel.clear"
    PRESET_CHANNEL_SET = "preset.channel.set"
    PRESET_DEACTIVATE = "preset.deactivate"
    PRESET_DELETE = "preset.delete"
    PRESET_IMPORT = "preset.import"
    PRESET_NODE_ADD = "preset.node.add"
    PRESET_NODE_DELETE = "preset.node.delete"
    PRESET_NODE_DISABLE = "preset.node.disable"
    PRESET_NODE_DUPLICATE = "preset.node.duplicate"
    PRESET_NODE_EDIT = "preset.node.edit"
    PRESET_NODE_ENABLE = "preset.node.enable"
    PRESET_NODES_DISABLE = "preset.nodes.disable"
    PRESET_NODES_ENABLE = "preset.nodes.enable"
    PRESET_NODES_MOVE = "preset.nodes.move"
    PRESET_NODES_REORDER = "preset.nodes.reorder"
    PRESET_RENAME = "preset.rename"
    PRESET_REPLACE = "preset.replace"
    PRESET_ROLLBACK = "preset.rollback"
    PRESET_STYLE = "preset.style"

    REGEX_DELETE = "regex.delete"
    REGEX_DISABLE = "regex.disable"
    REGEX_EDIT = "regex.edit"
    REGEX_ENABLE = "regex.enable"
    REGEX_IMPORT = "regex.import"
    REGEX_MOVE = "regex.move"
    REGEX_PRESET_DISABLE = "regex.preset.disable"
    REGEX_PRESET_ENABLE = "regex.preset.enable"

    SAMPLE_BUCKET_CREATE = "sample_bucket.create"
    SAMPLE_BUCKET_DELETE = "sample_bucket.delete"
    SAMPLE_BUCKET_UPDATE = "sample_bucket.update"

    SAMPLING_SET = "sampling.set"

    SERVER_CREATE = "server.create"
    SERVER_DIRECTORY = "server.directory"
    SERVER_TOKENIZER = "server.tokenizer"

    STM_BYPASS_OFF = "stm.bypass_off"
    STM_BYPASS_ON = "stm.bypass_on"
    STM_CHANNEL_PRIVATE = "stm.channel_private"
    STM_CHANNEL_PUBLIC = "stm.channel_public"
    STM_OPT_IN = "stm.opt_in"
    STM_OPT_OUT = "stm.opt_out"
    STM_RECEIVE_OFF = "stm.receive_off"
    STM_RECEIVE_ON = "stm.receive_on"

    TOKEN_CREATE = "token.create"
    TOKEN_REVOKE = "token.revoke"
