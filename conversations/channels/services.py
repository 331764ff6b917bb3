"""Writes for channel conversations (docs/channels.md): the bot's events, forgetting, retention.

Every change to one channel runs in one transaction holding that channel's row
(`select_for_update`), so two events for one channel at once apply one after the other, and the
unique constraints on the message ids make the same id twice store once; taking the row bumps the
channel's stamp (servers.generational_cache.bump_channel), which every process's copy rides. Messages are ordered by
their Discord id (a snowflake grows with time), so events that arrive out of order still land in
Discord's order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Exists, Subquery
from django.utils import timezone

from core.actors import Actor
from core.errors import UserError
from engine.groups import AGENT_CONTEXT_MAX_CHARS
from engine.macros import MacroEnv, Op, apply_ops, extract_ops, replay_into_cache
from servers import services as server_services
from servers.audit_actions import AuditAction
from servers.generational_cache import bump_channel
from servers.models import AuditEvent, Server

from ..models import (
    ChannelConversation,
    ChannelMessage,
    ChannelMessagePart,
    ChannelRole,
    ChannelSettings,
    MessageRole,
)
from ..services import MAX_OPS, MAX_SWIPES
from .selectors import DEFAULT_KEEP_DAYS, channel_settings, current_ops, messages_of, state_before

MAX_CONTENT_BYTES = 32 * 1024
MAX_PARTS = 20
MAX_NAME_CHARS = 100
MAX_KEEP_MESSAGES = 10_000
MAX_KEEP_DAYS = 3650
PRIVATE_CONTEXT_MAX_CHARS = AGENT_CONTEXT_MAX_CHARS  # the bound the tool declares
PRIVATE_CONTEXT_NAME = "System"  # a group history's system message is a narrator line and needs a name
DISCORD_EPOCH_MS = 1_420_070_400_000


class ChannelError(UserError, ValueError):
    """An event that cannot be applied; `message` is one sentence, `status` the API's answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Posted:
    """What an event left: the message (None once deleted), the channel's variables, whether the
    event added something (False for a retry of the same id) and the extraction's warnings."""

    message: ChannelMessage | None
    variables: dict[str, Any]
    created: bool = True
    warnings: tuple[str, ...] = ()

    known_parts: tuple[int, ...] | None = None  # when the event knows them, no query

    @property
    def parts(self) -> tuple[int, ...]:
        if self.message is None:
            return ()
        if self.known_parts is not None:
            return self.known_parts
        return tuple(self.message.parts.order_by("discord_id").values_list("discord_id", flat=True))


def check_content(content: Any, *, field: str = "content") -> str:
    if not isinstance(content, str):
        raise ChannelError(f"`{field}` must be text.")
    if len(content.encode("utf-8", "surrogatepass")) > MAX_CONTENT_BYTES:
        raise ChannelError(f"`{field}` is longer than {MAX_CONTENT_BYTES // 1024} KiB.")
    return content.replace("\r\n", "\n").replace("\x00", "")


def _lock(server_id: int, channel_id: int, *, create: bool = False, bump: bool = True) -> ChannelConversation:
    """The channel's conversation row, locked until the transaction ends; ChannelError (404) when the
    server stores none for the channel and `create` is off. Without `bump` the caller bumps the
    channel's stamp itself once it knows it changes something."""
    rows = ChannelConversation.objects.select_for_update().filter(server_id=server_id, channel_id=channel_id)
    conversation = rows.first()
    if conversation is None and create:
        # The first event of a channel; two at once both try, the unique constraint keeps one row.
        ChannelConversation.objects.get_or_create(server_id=server_id, channel_id=channel_id)
        conversation = rows.first()
    if conversation is None:
        raise ChannelError("This server stores no conversation for that channel.", 404)
    # Every change to the channel holds this lock: the processes' copies of its row are read again
    # once the change commits (a change rolled back bumps nothing).
    if bump:
        bump_channel(server_id, channel_id)
    return conversation


def _record_parent(server_id: int, channel_id: int, parent_id: int) -> None:
    """Keep a thread's parent on the server's channel row (servers.services.channel_ensure), where the
    pages and the assembler read it. A channel the server's bot stored as a DM keeps its record."""
    # The message is stored all the same: the channel row is the bot's own other record.
    with contextlib.suppress(server_services.ChannelMismatch):
        server_services.channel_ensure(channel_id=channel_id, owner_id=server_id, parent_id=parent_id)


def _find(conversation: ChannelConversation, discord_id: int) -> ChannelMessage | None:
    """The message with that id, or the reply that id is a part of."""
    # One statement, each half answered by its unique index: an OR across the join to the parts
    # left the database walking the messages in order until one matched, every message of the
    # table when none does (each new message's post).
    own = ChannelMessage.objects.filter(conversation=conversation, discord_id=discord_id).order_by()
    of_part = ChannelMessage.objects.filter(
        parts__conversation=conversation, parts__discord_id=discord_id
    ).order_by()
    return next(iter(own.union(of_part, all=True)[:1]), None)


def _find_new(conversation: ChannelConversation, discord_id: int) -> tuple[ChannelMessage | None, bool]:
    """For a posted id: the message stored with it (or the reply it is a part of), and whether the
    channel stores a later message. One round trip for a new message, the common case (each of its
    three lookups answered by a unique index); the stored message is read only for a retry."""
    own = ChannelMessage.objects.filter(conversation=conversation, discord_id=discord_id).order_by()
    of_part = ChannelMessagePart.objects.filter(conversation=conversation, discord_id=discord_id).order_by()
    later = ChannelMessage.objects.filter(conversation=conversation, discord_id__gt=discord_id).order_by()
    found, parent, has_later = (
        ChannelConversation.objects.filter(pk=conversation.pk)
        .annotate(
            found=Subquery(own.values("pk")[:1]),
            parent=Subquery(of_part.values("message_id")[:1]),
            has_later=Exists(later),
        )
        .values_list("found", "parent", "has_later")
        .get()
    )
    stored_pk = found if found is not None else parent
    if stored_pk is None:
        return None, bool(has_later)
    return ChannelMessage.objects.get(pk=stored_pk), bool(has_later)


PRIVATE_CONTEXT_REFUSED = (
    "That id is a group member's private context (kept by the add_agent_context tool), not a Discord "
    "message: the message routes do not change it; forgetting the channel removes it."
)


def _known(conversation: ChannelConversation, discord_id: int) -> ChannelMessage:
    """The stored Discord message (or reply) with that id, for an event to change. A member's private
    context is refused (409): it is no Discord message, and only forgetting the channel removes it."""
    message = _find(conversation, discord_id)
    if message is None:
        raise ChannelError("No stored message of this channel has that id.", 404)
    if message.role == ChannelRole.SYSTEM:
        raise ChannelError(PRIVATE_CONTEXT_REFUSED, 409)
    return message


def _replay(conversation: ChannelConversation, removed: Sequence[Op]) -> None:
    """Recompute the cache after a structural change (docs/channels.md#variables) and save it."""
    surviving = [current_ops(m) for m in messages_of(conversation)]
    conversation.variables = replay_into_cache(
        conversation.variables or {}, base=conversation.base or {}, removed=removed, surviving=surviving
    ).variables
    conversation.save(update_fields=["variables", "updated_at"])


def _extract(
    conversation: ChannelConversation, discord_id: int, index: int, content: str, state: dict[str, Any]
) -> tuple[str, list[dict[str, str]], dict[str, Any], tuple[str, ...]]:
    result = extract_ops(
        content,
        variables=state,
        random_key=("channel", conversation.pk, discord_id, index),
        env=MacroEnv(now=timezone.now()),
    )
    if len(result.ops) > MAX_OPS:
        raise ChannelError(f"A message may record at most {MAX_OPS} ops.")
    return result.text, [op.as_dict() for op in result.ops], result.variables, result.warnings


def message_post(
    *,
    server_id: int,
    channel_id: int,
    message_id: int,
    role: str,
    content: str,
    author_id: int | None = None,
    author_name: str = "",
    speaker: str = "",
    parent_id: int | None = None,
    parts: Sequence[int] = (),
) -> Posted:
    """Store a message the bot saw or posted. An assistant's write macros (a user's only when the
    server allows it) are extracted against the state so far, applied, recorded as ops and removed
    from the stored text. The same id again (or a part's) adds nothing and returns what is stored."""
    content = check_content(content)
    if role not in MessageRole.values:
        raise ChannelError("`role` must be user or assistant.")
    ids = [message_id, *parts]
    if len(set(ids)) != len(ids):
        raise ChannelError("`parts` repeats an id.")
    with transaction.atomic():
        conversation = _lock(server_id, channel_id, create=True, bump=False)
        if parent_id is not None:
            _record_parent(server_id, channel_id, parent_id)
        existing, has_later = _find_new(conversation, message_id)
        if existing is not None and existing.role == ChannelRole.SYSTEM:
            raise ChannelError(PRIVATE_CONTEXT_REFUSED, 409)  # never answered with its text
        if existing is not None:  # a retry: at most new parts, which no assembly reads
            _add_parts(conversation, existing, parts)
            return Posted(existing, dict(conversation.variables or {}), created=False)
        bump_channel(server_id, channel_id)
        _add_parts(conversation, None, parts)
        last = not has_later
        state = (
            dict(conversation.variables or {})
            if last
            else state_before(conversation, messages_of(conversation), message_id)
        )
        writes = role == MessageRole.ASSISTANT or channel_settings(server_id).user_writes
        text, ops, after, warnings = (
            _extract(conversation, message_id, 0, content, state) if writes else (content, [], state, ())
        )
        message = ChannelMessage.objects.create(
            conversation=conversation,
            discord_id=message_id,
            role=role,
            author_id=author_id,
            author_name=author_name[:MAX_NAME_CHARS],
            speaker=speaker[:MAX_NAME_CHARS],
            swipes=[{"content": text, "ops": ops}],
            current=0,
            content=text,
        )
        _add_parts(conversation, message, parts)
        if last:
            if ops:
                conversation.variables = after
            conversation.save(update_fields=["variables", "updated_at"])
        else:
            _replay(conversation, ())
    return Posted(message, dict(conversation.variables), warnings=warnings, known_parts=tuple(sorted(parts)))


def _add_parts(
    conversation: ChannelConversation, message: ChannelMessage | None, parts: Sequence[int]
) -> None:
    """Record `parts` as further pieces of `message` (with None: only check they are free). A part the
    reply already has is skipped, so a repeat that names the pieces the bot posted since adds just
    those; a part that is another stored message, or another reply's part, is refused."""
    if not parts:
        return
    owned = set(
        ChannelMessagePart.objects.filter(conversation=conversation, discord_id__in=parts).values_list(
            "discord_id", "message_id"
        )
    )
    others = ChannelMessage.objects.filter(conversation=conversation, discord_id__in=parts)
    if message is not None:
        others = others.exclude(pk=message.pk)
    if any(owner != (message.pk if message else None) for _, owner in owned) or (parts and others.exists()):
        raise ChannelError("`parts` names a message this channel already stores.")
    if message is None:
        return
    known = {discord_id for discord_id, _ in owned}
    new = [part for part in parts if part not in known and part != message.discord_id]
    if message.parts.count() + len(new) > MAX_PARTS:
        raise ChannelError(f"A reply may have at most {MAX_PARTS} parts.")
    ChannelMessagePart.objects.bulk_create(
        ChannelMessagePart(conversation=conversation, message=message, discord_id=part) for part in new
    )


def message_edit(*, server_id: int, channel_id: int, message_id: int, content: str) -> Posted:
    """Replace the shown text of a message (for a reply in parts: the whole reply's text). No
    extraction: write macros typed in an edit stay text; the variables replay."""
    content = check_content(content)
    with transaction.atomic():
        conversation = _lock(server_id, channel_id)
        message = _known(conversation, message_id)
        swipes = list(message.swipes or [{"content": "", "ops": []}])
        index = min(message.current, len(swipes) - 1)
        swipes[index] = {**swipes[index], "content": content}
        message.swipes = swipes
        message.content = content
        message.save(update_fields=["swipes", "content"])
        _replay(conversation, ())
    return Posted(message, dict(conversation.variables), created=False)


def message_delete(*, server_id: int, channel_id: int, message_id: int) -> Posted:
    """Delete a message (or the reply a part belongs to) with its ops; the variables replay."""
    with transaction.atomic():
        conversation = _lock(server_id, channel_id)
        message = _known(conversation, message_id)
        removed = current_ops(message)
        message.delete()
        _replay(conversation, removed)
    return Posted(None, dict(conversation.variables), created=False)


def swipe_add(*, server_id: int, channel_id: int, message_id: int, content: str) -> Posted:
    """A regenerated reply: a new swipe of the assistant message, made current, its write macros
    extracted against the state before the message. The same text as the current swipe again is a
    retry: nothing is added."""
    content = check_content(content)
    with transaction.atomic():
        conversation = _lock(server_id, channel_id)
        message = _known(conversation, message_id)
        if message.role != MessageRole.ASSISTANT:
            raise ChannelError("Only a reply (an assistant message) has swipes.")
        swipes = list(message.swipes or [])
        messages = messages_of(conversation)
        state = state_before(conversation, messages, message.discord_id)
        if swipes:
            # A retry is the current swipe's text again, extracted as that swipe was (its random
            # macros drawn with its own index), so a retried regeneration never adds a second swipe.
            text, ops, _, _ = _extract(conversation, message.discord_id, message.current, content, state)
            current = swipes[message.current]
            if current.get("content") == text and current.get("ops") == ops:
                return Posted(message, dict(conversation.variables or {}), created=False)
        text, ops, after, warnings = _extract(conversation, message.discord_id, len(swipes), content, state)
        if len(swipes) >= MAX_SWIPES:
            raise ChannelError(f"A message may have at most {MAX_SWIPES} swipes.")
        removed = current_ops(message)
        message.swipes = [*swipes, {"content": text, "ops": ops}]
        message.current = len(swipes)
        message.content = text
        message.save(update_fields=["swipes", "current", "content"])
        if messages and messages[-1].discord_id == message.discord_id:
            conversation.variables = after
            conversation.save(update_fields=["variables", "updated_at"])
        else:
            _replay(conversation, removed)
    return Posted(message, dict(conversation.variables), warnings=warnings)


def _swipe_index(message: ChannelMessage, index: Any, *, field: str = "index") -> int:
    count = len(message.swipes or ())
    if isinstance(index, bool) or not isinstance(index, int):
        raise ChannelError(f"`{field}` must be a whole number: a swipe's position, from 0.")
    if not 0 <= index < count:
        raise ChannelError(f"This message has no swipe {index}: `{field}` goes from 0 to {count - 1}.", 404)
    return index


def swipe_select(*, server_id: int, channel_id: int, message_id: int, index: Any) -> Posted:
    """Make swipe `index` (from 0) current; its ops are the ones replayed from now on."""
    with transaction.atomic():
        conversation = _lock(server_id, channel_id)
        message = _known(conversation, message_id)
        index = _swipe_index(message, index)
        removed = current_ops(message)
        message.current = index
        message.content = str(message.swipes[index].get("content", ""))
        message.save(update_fields=["current", "content"])
        _replay(conversation, removed)
    return Posted(message, dict(conversation.variables), created=False)


def swipe_delete(*, server_id: int, channel_id: int, message_id: int, index: int) -> Posted:
    """Remove swipe `index` (never a message's only one); when it was current, the one before it
    (or the next) takes over. The variables replay."""
    with transaction.atomic():
        conversation = _lock(server_id, channel_id)
        message = _known(conversation, message_id)
        index = _swipe_index(message, index)
        swipes = list(message.swipes or ())
        if len(swipes) <= 1:
            raise ChannelError("A message keeps at least one swipe; delete the message instead.")
        removed = current_ops(message)
        del swipes[index]
        if message.current > index or (message.current == index and index > 0):
            message.current -= 1
        message.swipes = swipes
        message.content = str(swipes[message.current].get("content", ""))
        message.save(update_fields=["swipes", "current", "content"])
        _replay(conversation, removed)
    return Posted(message, dict(conversation.variables), created=False)


def render_writes_keep(
    *, server_id: int, channel_id: int, before: dict[str, Any], after: dict[str, Any]
) -> dict[str, Any]:
    """Keep what one assembly's render wrote (the keys whose value `after` changed from `before`, and
    the ones it removed) in the channel's cache, as SillyTavern keeps them; returns the cache. Keys
    the render did not touch keep the value they have now, even if an event changed them meanwhile."""
    changed = {key: value for key, value in after.items() if before.get(key, _ABSENT) != value}
    gone = [key for key in before if key not in after]
    if not changed and not gone:
        return dict(after)
    with transaction.atomic():
        conversation = _lock(server_id, channel_id)
        variables = dict(conversation.variables or {})
        variables.update(changed)
        for key in gone:
            variables.pop(key, None)
        conversation.variables = variables
        conversation.save(update_fields=["variables", "updated_at"])
    return variables


def _id_at_end(conversation: ChannelConversation) -> int:
    """An id for a message Discord never saw, placing it after every stored message: the last
    snowflake of this millisecond (the low 22 bits full, which a real id of that millisecond would
    have to match exactly), or one past the newest stored id when that is later."""
    now_ms = int(timezone.now().timestamp() * 1000)
    at_now = ((now_ms - DISCORD_EPOCH_MS) << 22) | ((1 << 22) - 1)
    newest = (
        ChannelMessage.objects.filter(conversation=conversation)
        .order_by("-discord_id")
        .values_list("discord_id", flat=True)
        .first()
    )
    return max(at_now, (newest or 0) + 1)


def private_context_add(
    *, server_id: int, channel_id: int, member: str, text: str, by: Actor
) -> ChannelMessage:
    """Keep `text` in the channel's conversation, after the messages stored so far, as a system
    message only `member`'s prompts receive (docs/channels.md#private-context). The caller has
    checked that `member` belongs to the channel's group. ChannelError (404) when nothing is stored
    for the channel."""
    if not isinstance(text, str) or not text.strip():
        raise ChannelError("`text` must be the context to keep: some text.")
    if len(text) > PRIVATE_CONTEXT_MAX_CHARS:
        raise ChannelError(f"`text` has at most {PRIVATE_CONTEXT_MAX_CHARS} characters.")
    with transaction.atomic():
        conversation = _lock(server_id, channel_id)
        message = ChannelMessage.objects.create(
            conversation=conversation,
            discord_id=_id_at_end(conversation),
            role=ChannelRole.SYSTEM,
            author_name=PRIVATE_CONTEXT_NAME,
            private_to=member[:MAX_NAME_CHARS],
            swipes=[{"content": text, "ops": []}],
            current=0,
            content=text,
        )
        conversation.save(update_fields=["updated_at"])  # a new history: the cached copies are stale
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.CHANNEL_PRIVATE_CONTEXT,
            detail={"channel": str(channel_id), "member": member, "chars": len(text)},
        )
    return message


def recall_record(*, server_id: int, channel_id: int, query: str, found: int, by: Actor) -> None:
    """Audit one recall: who looked for what in which channel, and how many messages came back."""
    AuditEvent.record(
        server=server_id,
        actor=by,
        action=AuditAction.CHANNEL_RECALL,
        detail={"channel": str(channel_id), "query": query, "found": found},
    )


_ABSENT = object()


def conversation_forget(*, server_id: int, channel_id: int, by: Actor) -> int:
    """Forget the channel: every stored message and its variables. Returns how many messages went;
    ChannelError (404) when nothing is stored for it."""
    with transaction.atomic():
        conversation = _lock(server_id, channel_id)
        count = conversation.messages.count()
        conversation.delete()
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.CHANNEL_FORGET,
            detail={"channel": str(channel_id), "messages": count},
        )
    return count


def member_forget(*, server_id: int, user_id: int, by: Actor) -> tuple[int, list[int]]:
    """Forget every message `user_id` wrote in the server's stored channels, replaying each channel
    touched. Returns (messages removed, the channels touched)."""
    total = 0
    touched: list[int] = []
    with transaction.atomic():
        channel_ids = list(
            ChannelMessage.objects.filter(
                conversation__server_id=server_id, author_id=user_id, role=MessageRole.USER
            )
            .values_list("conversation__channel_id", flat=True)
            .distinct()
        )
        for channel_id in sorted(channel_ids):
            conversation = _lock(server_id, channel_id)
            rows = list(conversation.messages.filter(author_id=user_id, role=MessageRole.USER))
            removed = [op for row in rows for op in current_ops(row)]
            ChannelMessage.objects.filter(pk__in=[row.pk for row in rows]).delete()
            _replay(conversation, removed)
            total += len(rows)
            touched.append(channel_id)
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.CHANNEL_MEMBER_FORGET,
            detail={"user": str(user_id), "messages": total, "channels": [str(c) for c in touched]},
        )
    return total, touched


def settings_set(
    *, server: Server, user_writes: bool, keep_messages: int, keep_days: int, by: Actor
) -> ChannelSettings:
    """Change the server's channel rules (audited with the values before and after)."""
    if not 1 <= keep_messages <= MAX_KEEP_MESSAGES:
        raise ChannelError(f"Keep between 1 and {MAX_KEEP_MESSAGES} messages per channel.")
    if not 1 <= keep_days <= MAX_KEEP_DAYS:
        raise ChannelError(f"Keep messages between 1 and {MAX_KEEP_DAYS} days.")
    with transaction.atomic():
        current = channel_settings(server.pk)
        before = {
            "user_writes": current.user_writes,
            "keep_messages": current.keep_messages,
            "keep_days": current.keep_days,
        }
        after = {"user_writes": user_writes, "keep_messages": keep_messages, "keep_days": keep_days}
        if before == after:
            return current
        row, _ = ChannelSettings.objects.update_or_create(server=server, defaults=after)
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.CHANNEL_SETTINGS,
            detail={"before": before, "after": after},
        )
    return row


def expire_messages(*, now: datetime | None = None, batch: int = 200) -> int:
    """Drop, in every stored channel, the messages past its server's limits (count and age); their
    ops fold into the channel's base state, so the variables stay as they were. Returns how many
    messages went. Safe to run twice at once (each channel is changed under its row lock)."""
    now = now or timezone.now()
    rules = {row.server_id: row for row in ChannelSettings.objects.all()}
    default_cutoff = now - timedelta(days=DEFAULT_KEEP_DAYS)
    removed = 0
    for conversation_id, server_id in ChannelConversation.objects.values_list("pk", "server_id").iterator():
        rule = rules.get(server_id) or ChannelSettings(server_id=server_id)
        cutoff = now - timedelta(days=rule.keep_days) if server_id in rules else default_cutoff
        removed += _expire_one(conversation_id, keep=rule.keep_messages, cutoff=cutoff, batch=batch)
    return removed


def _expire_one(conversation_id: int, *, keep: int, cutoff: datetime, batch: int) -> int:
    with transaction.atomic():
        conversation = ChannelConversation.objects.select_for_update().filter(pk=conversation_id).first()
        if conversation is None:
            return 0
        bump_channel(conversation.server_id, conversation.channel_id)
        messages = messages_of(conversation)
        excess = max(0, len(messages) - keep)
        old = [m for index, m in enumerate(messages) if index < excess or m.created_at < cutoff]
        if not old:
            return 0
        old = old[:batch] if len(old) > batch else old
        folded = apply_ops(conversation.base or {}, [op for m in old for op in current_ops(m)])
        conversation.base = folded.variables
        ChannelMessage.objects.filter(pk__in=[m.pk for m in old]).delete()
        conversation.save(update_fields=["base", "updated_at"])
        return len(old)
