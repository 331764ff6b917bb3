"""What every change shares: the limits, the error, the row lock, text checks and the audit entry
that says which variables the change set or removed."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from core.actors import Actor
from core.errors import UserError
from engine.macros import MacroEnv, extract_ops, to_text
from servers.audit_actions import AuditAction
from servers.models import AuditEvent

from ..models import SampleConversation, Swipe
from ..selectors import conversation_variables, stored_ops

MAX_NAME_CHARS = 100
MAX_MESSAGE_CHARS = 100_000
MAX_MESSAGES = 2_000
MAX_SWIPES = 50
MAX_OPS = 500
_AUDIT_KEYS = 20


class ConversationError(UserError, ValueError):
    """A change that cannot be made; the message is one sentence for the user."""


def lock(conversation_id: int) -> SampleConversation:
    """The conversation row, locked until the transaction ends (one writer per conversation at a time)."""
    return SampleConversation.objects.select_for_update().get(pk=conversation_id)


def _changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, str]:
    """Which variables a change set or removed (a few, shortened), for the audit entry."""
    changed: dict[str, str] = {}
    for key in sorted(set(before) | set(after)):
        if before.get(key, _ABSENT) == after.get(key, _ABSENT):
            continue
        text = to_text(after[key]) if key in after else "(removed)"
        changed[key] = text if len(text) <= 80 else text[:79] + "…"
        if len(changed) >= _AUDIT_KEYS:
            break
    return changed


_ABSENT = object()


def audit_change(
    *,
    conversation: SampleConversation,
    by: Actor,
    action: AuditAction,
    before: dict[str, Any],
    detail: dict[str, Any],
) -> None:
    after = conversation_variables(conversation)
    changes = _changes(before, after)
    AuditEvent.record(
        server=conversation.server_id,
        actor=by,
        action=action,
        target=conversation,
        detail={**detail, **({"variables": changes} if changes else {})},
    )
    SampleConversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())


def check_text(text: str) -> str:
    text = (text or "").replace("\r\n", "\n").replace("\x00", "")
    if len(text) > MAX_MESSAGE_CHARS:
        raise ConversationError(f"A message may hold at most {MAX_MESSAGE_CHARS} characters.")
    return text


def extract_into(swipe: Swipe, text: str, *, state: dict[str, Any], append: bool) -> list[str]:
    """Extract `text`'s write macros into the swipe (appending to its text and ops when `append`)."""
    existing, _ = stored_ops(swipe) if append else ((), None)
    result = extract_ops(
        text,
        variables=state,
        random_key=(swipe.message.conversation_id, swipe.message_id, swipe.pk),
        first_position=len(existing),
        # Clock macros in a value read the message's own time, as they would have when it was sent.
        env=MacroEnv(now=swipe.message.timestamp),
    )
    if len(existing) + len(result.ops) > MAX_OPS:
        raise ConversationError(f"A message may record at most {MAX_OPS} ops.")
    swipe.text = (swipe.text + result.text) if append else result.text
    swipe.ops = [op.as_dict() for op in (*existing, *result.ops)]
    swipe.save(update_fields=["text", "ops"])
    return list(result.warnings)
