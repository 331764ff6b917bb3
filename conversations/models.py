"""Sample conversations with swipes and per-message variable ops (docs/conversations.md).

A conversation is an ordered list of messages; each message has one or more swipes (alternative
texts for the same turn), exactly one of them current. Each swipe keeps the write ops extracted from
it. The conversation's variables are never stored: they are always the replay of the current swipes'
ops, in message order, from an empty state (`conversation_selectors.conversation_state`).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

__all__ = [
    "ChannelConversation",
    "ChannelMessage",
    "ChannelMessagePart",
    "ChannelRole",
    "ChannelSettings",
    "ConversationMessage",
    "MessageRole",
    "SampleConversation",
    "Swipe",
]


class MessageRole(models.TextChoices):
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"


class SampleConversation(models.Model):
    server = models.ForeignKey(
        "servers.Server", on_delete=models.CASCADE, related_name="sample_conversations"
    )
    name = models.CharField(max_length=100)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "assembly_sampleconversation"  # moved from the assembly app; the table kept its name
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["server", "name"], name="one_sample_conversation_name_per_server")
        ]

    def __str__(self) -> str:
        return self.name


class ConversationMessage(models.Model):
    conversation = models.ForeignKey(SampleConversation, on_delete=models.CASCADE, related_name="messages")
    position = models.PositiveIntegerField(help_text="Order in the conversation; gaps are fine.")
    role = models.CharField(max_length=16, choices=MessageRole.choices)
    speaker = models.CharField(max_length=100, blank=True)
    timestamp = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "assembly_conversationmessage"  # moved from the assembly app; the table kept its name
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "position"], name="one_message_per_conversation_position"
            )
        ]

    def __str__(self) -> str:
        return f"#{self.position} {self.speaker or self.role}"


class Swipe(models.Model):
    message = models.ForeignKey(ConversationMessage, on_delete=models.CASCADE, related_name="swipes")
    text = models.TextField(blank=True, help_text="The visible text: extracted write macros are removed.")
    ops = models.JSONField(
        default=list, blank=True, help_text='Recorded write ops, in order: [{"op", "key", "value"}].'
    )
    is_current = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "assembly_swipe"  # moved from the assembly app; the table kept its name
        ordering = ["id"]
        constraints = [
            # At most one current swipe per message; the services keep it at exactly one.
            models.UniqueConstraint(
                fields=["message"], condition=Q(is_current=True), name="one_current_swipe_per_message"
            )
        ]

    def __str__(self) -> str:
        return f"swipe {self.pk} of message {self.message_id}"


class ChannelRole(models.TextChoices):
    """A stored channel message's role: what the bot saw or posted, or a member's private context
    (`add_agent_context`, docs/channels.md#private-context)."""

    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"
    SYSTEM = "system", "System"


class ChannelSettings(models.Model):
    """A server's rules for the channel conversations its bot reports (docs/channels.md)."""

    server = models.OneToOneField(
        "servers.Server", on_delete=models.CASCADE, primary_key=True, related_name="channel_settings"
    )
    user_writes = models.BooleanField(
        default=False, help_text="Whether write macros in users' messages write variables (off by default)."
    )
    keep_messages = models.PositiveIntegerField(default=500, help_text="Messages kept per channel.")
    keep_days = models.PositiveIntegerField(default=30, help_text="Days a message is kept.")

    def __str__(self) -> str:
        return f"channel settings of server {self.server_id}"


class ChannelConversation(models.Model):
    """One Discord channel's conversation as the server's bot reports it (docs/channels.md). The
    channel itself (its name, a thread's parent) is servers' `Channel` row of the same Discord id.

    `variables` is the channel's variable cache: what assembly renders write, and what the ops of
    the stored messages produce. `base` is the state the ops of expired messages left, so expiry
    does not reset a chat's variables; replay starts from it.
    """

    server = models.ForeignKey(
        "servers.Server", on_delete=models.CASCADE, related_name="channel_conversations"
    )
    channel_id = models.BigIntegerField(help_text="The Discord channel (or thread) id.")
    variables = models.JSONField(default=dict, blank=True)
    base = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["server", "channel_id"], name="one_channel_conversation_per_server"
            )
        ]

    def __str__(self) -> str:
        return f"channel {self.channel_id} of server {self.server_id}"


class ChannelMessage(models.Model):
    """One message of a channel conversation, in Discord's order (its id, a snowflake, is a time).

    `swipes` holds the reply's versions, `[{"content", "ops"}]`, `current` the index of the shown
    one (a user's message has one); `content` repeats the shown text, so reading a history decodes
    no JSON (the services keep the two in step).
    """

    conversation = models.ForeignKey(ChannelConversation, on_delete=models.CASCADE, related_name="messages")
    discord_id = models.BigIntegerField()
    role = models.CharField(max_length=16, choices=ChannelRole.choices)
    author_id = models.BigIntegerField(null=True, blank=True)
    author_name = models.CharField(max_length=100, blank=True)
    speaker = models.CharField(max_length=100, blank=True, help_text="A group member's history name.")
    private_to = models.CharField(
        max_length=100,
        blank=True,
        help_text="The group member whose prompts alone receive it (a private context).",
    )
    swipes = models.JSONField(default=list)
    current = models.PositiveIntegerField(default=0)
    content = models.TextField(blank=True, help_text="The current swipe's text, kept for reads.")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["discord_id"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "discord_id"], name="one_channel_message_per_id")
        ]
        indexes = [models.Index(fields=["author_id"], name="channel_message_author")]

    def __str__(self) -> str:
        return f"message {self.discord_id}"


class ChannelMessagePart(models.Model):
    """A further Discord message one reply was split into: an event for it is an event for the reply."""

    conversation = models.ForeignKey(ChannelConversation, on_delete=models.CASCADE, related_name="+")
    message = models.ForeignKey(ChannelMessage, on_delete=models.CASCADE, related_name="parts")
    discord_id = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "discord_id"], name="one_channel_message_part_per_id"
            )
        ]

    def __str__(self) -> str:
        return f"part {self.discord_id} of {self.message_id}"
