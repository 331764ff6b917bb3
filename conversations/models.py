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

__all__ = ["ConversationMessage", "MessageRole", "SampleConversation", "Swipe"]


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
