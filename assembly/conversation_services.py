"""Writes for sample conversations (SPEC §6). Every change is audited with the variables it changed.

New messages, new swipes and continuations are the only writes that extract ops; they run against
the state the earlier messages produce. Everything else (edit, delete, switching or deleting a
swipe, editing ops) just changes what survives: the state is always the replay, so it follows.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from presets.macros import MacroEnv
from presets.macros.extraction import extract_ops
from presets.macros.replay import Op, apply_ops
from presets.macros.values import to_text
from servers.models import AuditEvent, Server

from .conversation_import import ChatFileError, read_st_chat
from .conversation_models import ConversationMessage, MessageRole, SampleConversation, Swipe
from .conversation_selectors import conversation_variables, state_before, stored_ops

MAX_NAME_CHARS = 100
MAX_MESSAGE_CHARS = 100_000
MAX_MESSAGES = 2_000
MAX_SWIPES = 50
MAX_OPS = 500
_AUDIT_KEYS = 20


class ConversationError(ValueError):
    """A change that cannot be made; the message is one sentence for the user."""


# -- conversations -------------------------------------------------------------------------------------


def _clean_name(name: str) -> str:
    name = " ".join((name or "").split())
    if not name:
        raise ConversationError("Give the conversation a name.")
    if len(name) > MAX_NAME_CHARS:
        raise ConversationError(f"The name is longer than {MAX_NAME_CHARS} characters.")
    return name


def conversation_create(*, server: Server, name: str, by: Any) -> SampleConversation:
    """Create an empty sample conversation; raise ConversationError when the name is empty or taken."""
    name = _clean_name(name)
    try:
        with transaction.atomic():
            conversation = SampleConversation.objects.create(server=server, name=name, created_by=by)
            AuditEvent.record(server=server, actor=by, action="conversation.create", target=conversation)
    except IntegrityError:
        raise ConversationError(f"This server already has a conversation named {name!r}.") from None
    return conversation


def conversation_rename(*, conversation: SampleConversation, name: str, by: Any) -> None:
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
                action="conversation.rename",
                target=conversation,
                detail={"from": old, "to": name},
            )
    except IntegrityError:
        conversation.name = old
        raise ConversationError(f"This server already has a conversation named {name!r}.") from None


def conversation_delete(*, conversation: SampleConversation, by: Any) -> None:
    """Delete the conversation with all its messages."""
    with transaction.atomic():
        AuditEvent.record(
            server=conversation.server_id,
            actor=by,
            action="conversation.delete",
            target=conversation,
            detail={"name": conversation.name},
        )
        conversation.delete()


def conversation_import(
    *, server: Server, name: str, data: bytes | str, by: Any
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
            conversation = SampleConversation.objects.create(server=server, name=name, created_by=by)
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
                        _check_text(source.text),
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
                action="conversation.import",
                target=conversation,
                detail={"messages": len(chat.messages), "variables": len(state)},
            )
    except IntegrityError:
        raise ConversationError(f"This server already has a conversation named {name!r}.") from None
    return conversation, warnings


# -- the common shape of a change: lock, change, audit what the variables did -----------------------------


def _lock(conversation_id: int) -> SampleConversation:
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


def _audit(
    *,
    conversation: SampleConversation,
    by: Any,
    action: str,
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


def _check_text(text: str) -> str:
    text = (text or "").replace("\r\n", "\n").replace("\x00", "")
    if len(text) > MAX_MESSAGE_CHARS:
        raise ConversationError(f"A message may hold at most {MAX_MESSAGE_CHARS} characters.")
    return text


def _extract_into(swipe: Swipe, text: str, *, state: dict[str, Any], append: bool) -> list[str]:
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


# -- messages ------------------------------------------------------------------------------------------


def message_add(
    *,
    conversation: SampleConversation,
    role: str,
    text: str,
    by: Any,
    speaker: str = "",
    timestamp: datetime | None = None,
) -> tuple[ConversationMessage, list[str]]:
    """Append a message and extract its write macros against the whole conversation's state.

    Returns the message and the extraction's warnings.
    """
    if role not in MessageRole.values:
        raise ConversationError("A message's role is user or assistant.")
    text = _check_text(text)
    with transaction.atomic():
        conversation = _lock(conversation.pk)
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
        warnings = _extract_into(swipe, text, state=before, append=False)
        _audit(
            conversation=conversation,
            by=by,
            action="conversation.message_add",
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
    by: Any,
    speaker: str | None = None,
    timestamp: datetime | None = None,
) -> None:
    """Replace the current swipe's visible text (no extraction: macros typed here stay text)."""
    text = _check_text(text)
    with transaction.atomic():
        conversation = _lock(message.conversation_id)
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
        _audit(
            conversation=conversation,
            by=by,
            action="conversation.message_edit",
            before=before,
            detail={"message": message.position},
        )


def message_continue(*, message: ConversationMessage, text: str, by: Any) -> list[str]:
    """Append `text` to the current swipe, extracting its write macros after the ops already there.

    Returns the extraction's warnings.
    """
    text = _check_text(text)
    with transaction.atomic():
        conversation = _lock(message.conversation_id)
        before = conversation_variables(conversation)
        swipe = _current_swipe(message)
        if len(swipe.text) + len(text) > MAX_MESSAGE_CHARS:
            raise ConversationError(f"A message may hold at most {MAX_MESSAGE_CHARS} characters.")
        existing, _ = stored_ops(swipe)
        state = apply_ops(state_before(message), existing).variables
        warnings = _extract_into(swipe, text, state=state, append=True)
        _audit(
            conversation=conversation,
            by=by,
            action="conversation.message_continue",
            before=before,
            detail={"message": message.position, "ops": len(swipe.ops) - len(existing)},
        )
    return warnings


def message_delete(*, message: ConversationMessage, by: Any) -> None:
    """Delete the message and its swipes; the state becomes the replay of what survives."""
    with transaction.atomic():
        conversation = _lock(message.conversation_id)
        before = conversation_variables(conversation)
        position = message.position
        message.delete()
        _audit(
            conversation=conversation,
            by=by,
            action="conversation.message_delete",
            before=before,
            detail={"message": position},
        )


# -- swipes --------------------------------------------------------------------------------------------


def swipe_add(*, message: ConversationMessage, text: str, by: Any) -> tuple[Swipe, list[str]]:
    """Add an alternative reply, make it current and extract its ops against the earlier messages.

    Returns the swipe and the extraction's warnings.
    """
    text = _check_text(text)
    with transaction.atomic():
        conversation = _lock(message.conversation_id)
        if message.swipes.count() >= MAX_SWIPES:
            raise ConversationError(f"A message may have at most {MAX_SWIPES} swipes.")
        before = conversation_variables(conversation)
        message.swipes.filter(is_current=True).update(is_current=False)
        swipe = Swipe.objects.create(message=message, is_current=True)
        warnings = _extract_into(swipe, text, state=state_before(message), append=False)
        _audit(
            conversation=conversation,
            by=by,
            action="conversation.swipe_add",
            before=before,
            detail={"message": message.position, "ops": len(swipe.ops)},
        )
    return swipe, warnings


def swipe_select(*, swipe: Swipe, by: Any) -> None:
    """Make `swipe` its message's current one (its ops are the ones replayed from now on)."""
    message = swipe.message
    with transaction.atomic():
        conversation = _lock(message.conversation_id)
        before = conversation_variables(conversation)
        message.swipes.filter(is_current=True).exclude(pk=swipe.pk).update(is_current=False)
        Swipe.objects.filter(pk=swipe.pk).update(is_current=True)
        swipe.is_current = True
        _audit(
            conversation=conversation,
            by=by,
            action="conversation.swipe_select",
            before=before,
            detail={"message": message.position, "swipe": _swipe_number(swipe)},
        )


def _swipe_number(swipe: Swipe) -> int:
    return swipe.message.swipes.filter(pk__lt=swipe.pk).count() + 1


def swipe_delete(*, swipe: Swipe, by: Any) -> None:
    """Delete a swipe (never a message's only one); when it was current, the previous one takes over."""
    message = swipe.message
    with transaction.atomic():
        conversation = _lock(message.conversation_id)
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
            Swipe.objects.filter(pk=successor.pk).update(is_current=True)
        _audit(
            conversation=conversation,
            by=by,
            action="conversation.swipe_delete",
            before=before,
            detail={"message": message.position, "swipe": number},
        )


def swipe_set_ops(*, swipe: Swipe, ops: Sequence[Op], by: Any) -> None:
    """Replace the swipe's recorded ops with `ops` (the op panel's save); the state replays."""
    if len(ops) > MAX_OPS:
        raise ConversationError(f"A message may record at most {MAX_OPS} ops.")
    message = swipe.message
    with transaction.atomic():
        conversation = _lock(message.conversation_id)
        before = conversation_variables(conversation)
        old = len(swipe.ops or [])
        Swipe.objects.filter(pk=swipe.pk).update(ops=[op.as_dict() for op in ops])
        swipe.ops = [op.as_dict() for op in ops]
        _audit(
            conversation=conversation,
            by=by,
            action="conversation.ops_edit",
            before=before,
            detail={"message": message.position, "ops_before": old, "ops_after": len(ops)},
        )
