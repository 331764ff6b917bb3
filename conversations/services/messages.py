"""Add, edit, continue and delete messages; new text has its write macros extracted against the
state the earlier messages produce."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from core.actors import Actor
from engine.macros import apply_ops
from servers.audit_actions import AuditAction

from ..models import ConversationMessage, MessageRole, SampleConversation, Swipe
from ..selectors import conversation_variables, state_before, stored_ops
from .changes import (
    MAX_MESSAGE_CHARS,
    MAX_MESSAGES,
    ConversationError,
    audit_change,
    check_text,
    extract_into,
    lock,
)


def message_add(
    *,
    conversation: SampleConversation,
    role: str,
    text: str,
    by: Actor,
    speaker: str = "",
    timestamp: datetime | None = None,
) -> tuple[ConversationMessage, list[str]]:
    """Append a message and extract its write macros against the whole conversation's state.

    Returns the message and the extraction's warnings.
    """
    if role not in MessageRole.values:
        raise ConversationError("A message's role is user or assistant.")
    text = check_text(text)
    with transaction.atomic():
        conversation = lock(conversation.pk)
        stats = conversation.messages.aggregate(last=Max("position"))
        if conversation.messages.count() >= MAX_MESSAGES:
            raise ConversationError(f"A conversation may hold at most {MAX_MESSAGES} messages.")
        before = conversation_variables(conversation)
        message = ConversationMessage.objects.create(
            conversation=conversation,
            position=(stats["last"] or 0) + 1,
            role=role,
            speaker=(speaker or "").strip()[:100],
            timestamp=timestamp or timezone.now(),
        )
        swipe = Swipe.objects.create(message=message, is_current=True)
        warnings = extract_into(swipe, text, state=before, append=False)
        audit_change(
            conversation=conversation,
            by=by,
            action=AuditAction.CONVERSATION_MESSAGE_ADD,
            before=before,
            detail={"message": message.position, "ops": len(swipe.ops)},
        )
    return message, warnings


def _current_swipe(message: ConversationMessage) -> Swipe:
    swipe = message.swipes.filter(is_current=True).first() or message.swipes.order_by("-id").first()
    if swipe is None:
        swipe = Swipe.objects.create(message=message, is_current=True)
    return swipe


def message_edit(
    *,
    message: ConversationMessage,
    text: str,
    by: Actor,
    speaker: str | None = None,
    timestamp: datetime | None = None,
) -> None:
    """Replace the current swipe's visible text (no extraction: macros typed here stay text)."""
    text = check_text(text)
    with transaction.atomic():
        conversation = lock(message.conversation_id)
        before = conversation_variables(conversation)
        swipe = _current_swipe(message)
        swipe.text = text
        swipe.save(update_fields=["text"])
        fields = []
        if speaker is not None:
            message.speaker = speaker.strip()[:100]
            fields.append("speaker")
        if timestamp is not None:
            message.timestamp = timestamp
            fields.append("timestamp")
        if fields:
            message.save(update_fields=fields)
        audit_change(
            conversation=conversation,
            by=by,
            action=AuditAction.CONVERSATION_MESSAGE_EDIT,
            before=before,
            detail={"message": message.position},
        )


def message_continue(*, message: ConversationMessage, text: str, by: Actor) -> list[str]:
    """Append `text` to the current swipe, extracting its write macros after the ops already there.

    Returns the extraction's warnings.
    """
    text = check_text(text)
    with transaction.atomic():
        conversation = lock(message.conversation_id)
        before = conversation_variables(conversation)
        swipe = _current_swipe(message)
        if len(swipe.text) + len(text) > MAX_MESSAGE_CHARS:
            raise ConversationError(f"A message may hold at most {MAX_MESSAGE_CHARS} characters.")
        existing, _ = stored_ops(swipe)
        state = apply_ops(state_before(message), existing).variables
        warnings = extract_into(swipe, text, state=state, append=True)
        audit_change(
            conversation=conversation,
            by=by,
            action=AuditAction.CONVERSATION_MESSAGE_CONTINUE,
            before=before,
            detail={"message": message.position, "ops": len(swipe.ops) - len(existing)},
        )
    return warnings


def message_delete(*, message: ConversationMessage, by: Actor) -> None:
    """Delete the message and its swipes; the state becomes the replay of what survives."""
    with transaction.atomic():
        conversation = lock(message.conversation_id)
        before = conversation_variables(conversation)
        position = message.position
        message.delete()
        audit_change(
            conversation=conversation,
            by=by,
            action=AuditAction.CONVERSATION_MESSAGE_DELETE,
            before=before,
            detail={"message": position},
        )
