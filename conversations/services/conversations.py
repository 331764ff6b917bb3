"""Create, rename, delete and import sample conversations."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from core.actors import Actor, user_of
from engine.macros import MacroEnv, apply_ops, extract_ops
from servers.audit_actions import AuditAction
from servers.models import AuditEvent, Server

from ..models import ConversationMessage, SampleConversation, Swipe
from ..st_chat import ChatFileError, read_st_chat
from .changes import MAX_MESSAGES, MAX_NAME_CHARS, MAX_OPS, MAX_SWIPES, ConversationError, check_text


def _clean_name(name: str) -> str:
    name = " ".join((name or "").split())
    if not name:
        raise ConversationError("Give the conversation a name.")
    if len(name) > MAX_NAME_CHARS:
        raise ConversationError(f"The name is longer than {MAX_NAME_CHARS} characters.")
    return name


def conversation_create(*, server: Server, name: str, by: Actor) -> SampleConversation:
    """Create an empty sample conversation; raise ConversationError when the name is empty or taken."""
    name = _clean_name(name)
    try:
        with transaction.atomic():
            conversation = SampleConversation.objects.create(server=server, name=name, created_by=user_of(by))
            AuditEvent.record(
                server=server, actor=by, action=AuditAction.CONVERSATION_CREATE, target=conversation
            )
    except IntegrityError:
        raise ConversationError(f"This server already has a conversation named {name!r}.") from None
    return conversation


def conversation_rename(*, conversation: SampleConversation, name: str, by: Actor) -> None:
    """Rename the conversation; raise ConversationError when the name is empty or taken."""
    name = _clean_name(name)
    old = conversation.name
    if name == old:
        return
    try:
        with transaction.atomic():
            SampleConversation.objects.filter(pk=conversation.pk).update(name=name, updated_at=timezone.now())
            conversation.name = name
            AuditEvent.record(
                server=conversation.server_id,
                actor=by,
                action=AuditAction.CONVERSATION_RENAME,
                target=conversation,
                detail={"from": old, "to": name},
            )
    except IntegrityError:
        conversation.name = old
        raise ConversationError(f"This server already has a conversation named {name!r}.") from None


def conversation_delete(*, conversation: SampleConversation, by: Actor) -> None:
    """Delete the conversation with all its messages."""
    with transaction.atomic():
        AuditEvent.record(
            server=conversation.server_id,
            actor=by,
            action=AuditAction.CONVERSATION_DELETE,
            target=conversation,
            detail={"name": conversation.name},
        )
        conversation.delete()


def conversation_import(
    *, server: Server, name: str, data: bytes | str, by: Actor
) -> tuple[SampleConversation, list[str]]:
    """Create a conversation from a SillyTavern chat file, extracting every swipe as if it were saved.

    Each swipe's ops are the ones the file recorded (Luker's `var_ops`) followed by the write macros
    of its text, resolved against the state the earlier messages' current swipes produce. Returns
    the conversation and warnings; raises ConversationError for a bad file or name.
    """
    name = _clean_name(name)
    try:
        chat = read_st_chat(data, max_messages=MAX_MESSAGES)
    except ChatFileError as error:
        raise ConversationError(str(error)) from None
    warnings = list(chat.warnings)
    try:
        with transaction.atomic():
            conversation = SampleConversation.objects.create(server=server, name=name, created_by=user_of(by))
            state: dict[str, Any] = {}
            for position, entry in enumerate(chat.messages, start=1):
                message = ConversationMessage.objects.create(
                    conversation=conversation,
                    position=position,
                    role=entry.role,
                    speaker=entry.speaker,
                    timestamp=entry.timestamp or timezone.now(),
                )
                swipes = Swipe.objects.bulk_create(
                    [
                        Swipe(message=message, is_current=index == entry.current)
                        for index in range(len(entry.swipes[:MAX_SWIPES]))
                    ]
                )
                after = state
                for index, (swipe, source) in enumerate(zip(swipes, entry.swipes, strict=False)):
                    recorded = apply_ops(state, source.ops)
                    result = extract_ops(
                        check_text(source.text),
                        variables=recorded.variables,
                        random_key=(conversation.pk, message.pk, swipe.pk),
                        first_position=len(source.ops),
                        env=MacroEnv(now=message.timestamp),
                    )
                    swipe.text = result.text
                    swipe.ops = [op.as_dict() for op in (*source.ops, *result.ops)][:MAX_OPS]
                    if index == entry.current:
                        after = result.variables
                        warnings.extend(
                            f"Message {position}: {w}" for w in (*recorded.warnings, *result.warnings)
                        )
                Swipe.objects.bulk_update(swipes, ["text", "ops"])
                state = after
            AuditEvent.record(
                server=server,
                actor=by,
                action=AuditAction.CONVERSATION_IMPORT,
                target=conversation,
                detail={"messages": len(chat.messages), "variables": len(state)},
            )
    except IntegrityError:
        raise ConversationError(f"This server already has a conversation named {name!r}.") from None
    return conversation, warnings
