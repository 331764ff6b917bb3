"""Writes for short-term memory: storing turns and summaries, privacy settings (audited), the
cross-server opt-in, and the batched expiry the Celery beat task runs. The channel rows a turn
names are servers' (servers.services.channel_ensure); a channel's private flag is set there too."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from core.actors import Actor, Agent
from core.errors import UserError
from servers import services as server_services
from servers.audit_actions import AuditAction
from servers.models import AuditEvent, Channel, Server

from .models import (
    MAX_MESSAGES,
    SUMMARY_MAX_CHARS,
    DiscordUser,
    DiscordUserName,
    StmConsent,
    StmEntry,
)
from .selectors import expired_q, stm_settings

MESSAGE_ROLES = frozenset({"user", "assistant", "system"})
MESSAGE_MAX_CHARS = 8000


class StmError(UserError, ValueError):
    """Bad input to a memory write; the message is one sentence for the user."""


def clean_messages(raw: Any) -> list[dict[str, str]]:
    """Validated messages in the shared shape {role, name, content, timestamp}; StmError otherwise."""
    if not isinstance(raw, list):
        raise StmError("`messages` must be a list of {role, name, content, timestamp} objects.")
    cleaned = []
    for index, message in enumerate(raw, start=1):
        if not isinstance(message, dict):
            raise StmError(f"Message {index} is not an object.")
        role = str(message.get("role", "user")).strip().lower()
        if role not in MESSAGE_ROLES:
            raise StmError(f"Message {index} has role {role!r}; use user, assistant or system.")
        content = message.get("content", "")
        if not isinstance(content, str):
            raise StmError(f"Message {index} has no text `content`.")
        cleaned.append(
            {
                "role": role,
                "name": str(message.get("name") or "")[:100],
                "content": content[:MESSAGE_MAX_CHARS].replace("\x00", ""),
                "timestamp": str(message.get("timestamp") or "")[:40],
            }
        )
    return cleaned


def clean_summary(summary: Any) -> str:
    """The summary text, at most 1500 characters; StmError (one sentence) otherwise."""
    if not isinstance(summary, str):
        raise StmError("`summary` must be text.")
    summary = summary.replace("\x00", "").strip()
    if len(summary) > SUMMARY_MAX_CHARS:
        raise StmError(f"The summary is {len(summary)} characters long; the limit is {SUMMARY_MAX_CHARS}.")
    return summary


def _channel(*, channel_id: int, owner_id: int, **facts: Any) -> Channel:
    """The server's channel row (servers.services.channel_ensure); a DM/server mismatch is an StmError."""
    try:
        return server_services.channel_ensure(channel_id=channel_id, owner_id=owner_id, **facts)
    except server_services.ChannelMismatch as error:
        raise StmError(error.message) from error


def user_ensure(*, user_id: int, server_id: int | None = None, name: str = "") -> DiscordUser:
    """The user's row, created when missing; a non-empty `name` becomes the user's name on `server_id`
    only (names are per server)."""
    user, _ = DiscordUser.objects.get_or_create(id=user_id)
    name = name.strip()[:100]
    if name and server_id is not None:
        DiscordUserName.objects.update_or_create(user=user, server_id=server_id, defaults={"name": name})
    return user


def _expired(entry: StmEntry, *, now: datetime) -> bool:
    config = stm_settings()
    ttl = config.summary_ttl_hours if entry.summary else config.ttl_hours
    return now - entry.updated_at > timedelta(hours=ttl)


def _locked_entry(*, channel: Channel, lineage: str, user_id: int, now: datetime) -> StmEntry:
    """The channel's entry, locked for this transaction; an expired one starts over (reads ignore it)."""
    for _ in range(2):
        entry = StmEntry.objects.select_for_update().filter(channel=channel, lineage=lineage).first()
        if entry is not None:
            if _expired(entry, now=now):
                entry.messages, entry.summary = [], ""
            entry.user_id = user_id
            return entry
        try:
            with transaction.atomic():
                return StmEntry.objects.create(
                    owner_id=channel.owner_id,
                    server_id=channel.server_id,
                    channel=channel,
                    user_id=user_id,
                    lineage=lineage,
                    updated_at=now,
                )
        except IntegrityError:  # another turn created it first: lock that one
            continue
    raise StmError("The memory entry could not be stored; try again.")


def stm_store_turn(
    *,
    server_id: int,
    channel_id: int,
    user_id: int,
    messages: Sequence[dict[str, str]],
    parent_id: int | None = None,
    lineage: str = "",
    user_name: str = "",
    channel_name: str = "",
    summary: str | None = None,
    dm: bool = False,
    now: datetime | None = None,
) -> StmEntry:
    """Append a turn's messages to the channel's entry of `server_id` (keeping the last 10), refresh it.

    With `dm` the entry is a DM entry, still `server_id`'s own: no other server reads or writes it.
    A given `summary` replaces the stored one; None keeps it.
    """
    now = now or timezone.now()
    cleaned = clean_messages(list(messages))
    new_summary = None if summary is None else clean_summary(summary)
    with transaction.atomic():
        channel = _channel(
            channel_id=channel_id, owner_id=server_id, dm=dm, parent_id=parent_id, name=channel_name
        )
        user_ensure(user_id=user_id, server_id=server_id, name=user_name)
        entry = _locked_entry(channel=channel, lineage=lineage[:100], user_id=user_id, now=now)
        entry.messages = (list(entry.messages) + cleaned)[-MAX_MESSAGES:]
        if new_summary is not None:
            entry.summary = new_summary
        entry.updated_at = now
        entry.save()
    return entry


def stm_put_entry(
    *,
    server_id: int,
    channel_id: int,
    user_id: int,
    messages: Sequence[dict[str, str]],
    summary: str = "",
    parent_id: int | None = None,
    private: bool | None = None,
    lineage: str = "",
    dm: bool = False,
    updated_at: datetime | None = None,
) -> StmEntry:
    """Store a channel's entry exactly as given (messages, summary, last update): the CLI and demo data.
    With `dm` it is a DM entry of `server_id`.

    Channel and user rows are created when missing; `private` None leaves the channel's flag alone.
    """
    cleaned = clean_messages(list(messages))[-MAX_MESSAGES:]
    summary = clean_summary(summary)
    with transaction.atomic():
        channel = _channel(
            channel_id=channel_id, owner_id=server_id, dm=dm, parent_id=parent_id, private=private
        )
        user_ensure(user_id=user_id)
        entry, _ = StmEntry.objects.update_or_create(
            channel=channel,
            lineage=lineage[:100],
            defaults={
                "owner_id": server_id,
                "server_id": channel.server_id,
                "user_id": user_id,
                "messages": cleaned,
                "summary": summary,
                "updated_at": updated_at or timezone.now(),
            },
        )
    return entry


def stm_update_summary(
    *,
    server_id: int,
    channel_id: int,
    user_id: int,
    summary: str,
    lineage: str = "",
    dm: bool = False,
    now: datetime | None = None,
) -> StmEntry:
    """Set a channel's summary (the update_short_term_memory tool) and refresh the entry."""
    return stm_store_turn(
        server_id=server_id,
        channel_id=channel_id,
        user_id=user_id,
        messages=[],
        lineage=lineage,
        summary=summary,
        dm=dm,
        now=now,
    )


def server_set_privacy_bypass(*, server: Server, bypass: bool, by: Actor) -> None:
    """Turn the server's STM privacy bypass on or off, audited."""
    with transaction.atomic():
        Server.objects.filter(pk=server.pk).update(stm_privacy_bypass=bypass)
        server.stm_privacy_bypass = bypass
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.STM_BYPASS_ON if bypass else AuditAction.STM_BYPASS_OFF,
            detail={"stm_privacy_bypass": bypass},
        )


def server_set_receive_other_servers(*, server: Server, receive: bool, by: Actor) -> None:
    """Let other servers' memories of a user (each relayed with the user's consent by its own
    server's bot) surface in this server's prompts, or shut them out; audited (docs/memory.md)."""
    with transaction.atomic():
        Server.objects.filter(pk=server.pk).update(stm_receive_other_servers=receive)
        server.stm_receive_other_servers = receive
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.STM_RECEIVE_ON if receive else AuditAction.STM_RECEIVE_OFF,
            detail={"stm_receive_other_servers": receive},
        )


def user_withdraw_consents(*, user_id: int, server: Server | int, by: Actor) -> int:
    """Withdraw every consent the user gave, through any server's bot, from `server`'s bot: a user
    may take back in any server what they gave in another (docs/memory.md). Each server whose
    consent goes is told in its own audit log; the asking server's log gets the count."""
    server_id = server.pk if isinstance(server, Server) else server
    with transaction.atomic():
        user = user_ensure(user_id=user_id)
        withdrawn = sorted(
            StmConsent.objects.select_for_update().filter(user_id=user_id).values_list("server_id", flat=True)
        )
        StmConsent.objects.filter(user_id=user_id, server_id__in=withdrawn).delete()
        for other in withdrawn:
            if other != server_id:
                AuditEvent.record(
                    server=other,
                    actor=Agent("the user, through another server's bot"),
                    action=AuditAction.STM_OPT_OUT,
                    target=user,
                    detail={"user": user_id, "cross_server_opt_in": False, "withdrawn_elsewhere": True},
                )
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.STM_OPT_OUT,
            target=user,
            detail={"user": user_id, "cross_server_opt_in": False, "everywhere": len(withdrawn)},
        )
    return len(withdrawn)


def user_set_opt_in(
    *,
    user_id: int,
    opt_in: bool,
    server: Server | int,
    by: Actor,
) -> bool:
    """Record or withdraw the user's consent relayed by `server`'s bot, audited; return it.

    The consent is per (user, server): it lets *this* server's memories of the user surface in the
    user's other servers and DMs, and never opens another server's memories (docs/memory.md).
    """
    server_id = server.pk if isinstance(server, Server) else server
    with transaction.atomic():
        user = user_ensure(user_id=user_id)
        if opt_in:
            StmConsent.objects.get_or_create(user_id=user_id, server_id=server_id)
        else:
            StmConsent.objects.filter(user_id=user_id, server_id=server_id).delete()
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.STM_OPT_IN if opt_in else AuditAction.STM_OPT_OUT,
            target=user,
            detail={"user": user_id, "cross_server_opt_in": opt_in},
        )
    return opt_in


@dataclass(frozen=True, slots=True)
class ExpiryReport:
    deleted: int
    batches: int
    longest_batch_seconds: float


def expire_entries(
    *, now: datetime | None = None, batch_size: int = 2000, max_batches: int | None = None
) -> ExpiryReport:
    """Delete expired entries in batches, each its own short transaction; return what was done.

    Safe to run twice at once and to interrupt: a batch locks the rows it picked (others skip
    them on PostgreSQL) and its DELETE re-checks the expiry condition, so an entry refreshed in
    between survives. Nothing unexpired is ever deleted.
    """
    now = now or timezone.now()
    deleted = batches = 0
    longest = 0.0
    while max_batches is None or batches < max_batches:
        started = time.perf_counter()
        picked, count = expire_batch(now=now, batch_size=batch_size)
        longest = max(longest, time.perf_counter() - started)
        if not picked:
            break
        batches += 1
        deleted += count
        if picked < batch_size:
            break
    return ExpiryReport(deleted=deleted, batches=batches, longest_batch_seconds=longest)


def expire_batch(*, now: datetime, batch_size: int) -> tuple[int, int]:
    """One batch in one transaction: (how many expired rows it picked, how many it deleted)."""
    with transaction.atomic():
        picked = StmEntry.objects.filter(expired_q(now=now)).order_by()
        if connection.features.has_select_for_update_skip_locked:
            picked = picked.select_for_update(skip_locked=True)
        ids = list(picked.values_list("id", flat=True)[:batch_size])
        return len(ids), delete_expired(ids, now=now) if ids else 0


def delete_expired(ids: Sequence[int], *, now: datetime) -> int:
    """Delete those of `ids` that are still expired at `now` (the condition is re-checked)."""
    count, _ = StmEntry.objects.filter(expired_q(now=now), id__in=list(ids)).delete()
    return count
