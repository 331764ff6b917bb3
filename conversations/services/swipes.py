"""Swipes: alternative texts for one turn, exactly one of them current, and their recorded ops."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from core.actors import Actor
from engine.macros import Op
from servers.audit_actions import AuditAction

from ..models import ConversationMessage, Swipe
from ..selectors import conversation_variables, state_before
from .changes import MAX_OPS, MAX_SWIPES, ConversationError, audit_change, check_text, extract_into, lock


def swipe_add(*, message: ConversationMessage, text: str, by: Actor) -> tuple[Swipe, list[str]]:
    """Add an alternative reply, make it current and extract its ops against the earlier messages.

    Returns the swipe and the extraction's warnings.
    """
    text = check_text(text)
    with transaction.atomic():
        conversation = lock(message.conversation_id)
        if message.swipes.count() >= MAX_SWIPES:
            raise ConversationError(f"A message may have at most {MAX_SWIPES} swipes.")
        before = conversation_variables(conversation)
        message.swipes.filter(is_current=True).update(is_current=False)
        swipe = Swipe.objects.create(message=message, is_current=True)
        warnings = extract_into(swipe, text, state=state_before(message), append=False)
        audit_change(
            conversation=conversation,
            by=by,
            action=AuditAction.CONVERSATION_SWIPE_ADD,
            before=before,
            detail={"message": message.position, "ops": len(swipe.ops)},
        )
    return swipe, warnings


def swipe_select(*, swipe: Swipe, by: Actor) -> None:
    """Make `swipe` its message's current one (its ops are the ones replayed from now on)."""
    message = swipe.message
    with transaction.atomic():
        conversation = lock(message.conversation_id)
        before = conversation_variables(conversation)
        message.swipes.filter(is_current=True).exclude(pk=swipe.pk).update(is_current=False)
        Swipe.objects.filter(pk=swipe.pk).update(is_current=True)
        swipe.is_current = True
        audit_change(
            conversation=conversation,
            by=by,
            action=AuditAction.CONVERSATION_SWIPE_SELECT,
            before=before,
            detail={"message": message.position, "swipe": _swipe_number(swipe)},
        )


def _swipe_number(swipe: Swipe) -> int:
    return swipe.message.swipes.filter(pk__lt=swipe.pk).count() + 1


def swipe_delete(*, swipe: Swipe, by: Actor) -> None:
    """Delete a swipe (never a message's only one); when it was current, the previous one takes over."""
    message = swipe.message
    with transaction.atomic():
        conversation = lock(message.conversation_id)
        if message.swipes.count() <= 1:
            raise ConversationError("A message keeps at least one swipe; delete the message instead.")
        before = conversation_variables(conversation)
        number = _swipe_number(swipe)
        swipe_id = swipe.pk
        was_current = Swipe.objects.filter(pk=swipe_id, is_current=True).exists()
        swipe.delete()
        if was_current:
            successor = (
                message.swipes.filter(pk__lt=swipe_id).order_by("-id").first()
                or message.swipes.order_by("id").first()
            )
            if successor is not None:
                Swipe.objects.filter(pk=successor.pk).update(is_current=True)
        audit_change(
            conversation=conversation,
            by=by,
            action=AuditAction.CONVERSATION_SWIPE_DELETE,
            before=before,
            detail={"message": message.position, "swipe": number},
        )


def swipe_set_ops(*, swipe: Swipe, ops: Sequence[Op], by: Actor) -> None:
    """Replace the swipe's recorded ops with `ops` (the op panel's save); the state replays."""
    if len(ops) > MAX_OPS:
        raise ConversationError(f"A message may record at most {MAX_OPS} ops.")
    message = swipe.message
    with transaction.atomic():
        conversation = lock(message.conversation_id)
        before = conversation_variables(conversation)
        old = len(swipe.ops or [])
        Swipe.objects.filter(pk=swipe.pk).update(ops=[op.as_dict() for op in ops])
        swipe.ops = [op.as_dict() for op in ops]
        audit_change(
            conversation=conversation,
            by=by,
            action=AuditAction.CONVERSATION_OPS_EDIT,
            before=before,
            detail={"message": message.position, "ops_before": old, "ops_after": len(ops)},
        )
