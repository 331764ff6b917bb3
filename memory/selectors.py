"""Reads for short-term memory. `stm_contribution` is the one path from storage to the contributor:
the assembler, the review page and the CLI all call it, so they cannot disagree."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet

from core.hooks import Hook
from engine import (
    EMPTY,
    Contribution,
    EntrySnapshot,
    StmContext,
    StmMessage,
    StmPolicy,
    StmSettings,
    contribute,
)
from servers import selectors as server_selectors
from servers.models import Server

from .models import DiscordUser, DiscordUserName, StmConsent, StmEntry

logger = logging.getLogger(__name__)

# Notes apps above memory keep per channel that reach prompts (groups adds its members' notes), for
# the review page: `notes(server, channel=id)` gives dicts with channel, member, text, updated_at.
CHANNEL_NOTES: Hook[Callable[..., list[dict[str, Any]]]] = Hook("notes per channel")


def stm_settings() -> StmSettings:
    """The caps and thresholds of docs/memory.md, from the environment (config/settings.py)."""
    return StmSettings(
        ttl_hours=settings.SHORT_TERM_MEMORY_TTL_HOURS,
        summary_ttl_hours=settings.SHORT_TERM_MEMORY_SUMMARY_TTL_HOURS,
        max_other_channels=settings.SHORT_TERM_MEMORY_MAX_OTHER_CHANNELS,
        min_messages_for_summary=settings.SHORT_TERM_MEMORY_MIN_MESSAGES_FOR_SUMMARY,
    )


def expired_q(*, now: datetime, config: StmSettings | None = None) -> Q:
    """The expiry condition (age strictly over the entry's TTL) as a filter on StmEntry."""
    config = config or stm_settings()
    stale_without_summary = Q(summary="", updated_at__lt=now - timedelta(hours=config.ttl_hours))
    stale_with_summary = ~Q(summary="") & Q(updated_at__lt=now - timedelta(hours=config.summary_ttl_hours))
    return stale_without_summary | stale_with_summary


def live_entries(*, now: datetime) -> QuerySet[StmEntry]:
    """Entries that have not expired: what every read outside the review sees."""
    return StmEntry.objects.exclude(expired_q(now=now))


@dataclass(frozen=True, slots=True)
class LoadedStm:
    """What `stm_contribution` read and decided; the review page shows `entries` beside `contribution`."""

    contribution: Contribution
    entries: dict[int, StmEntry]
    dm: bool
    consents: frozenset[int]  # the servers whose bot relayed the user's consent


# (server id, its channel ids) -> the turns stored elsewhere for those of them that have any, by
# channel: how a caller above hands in the channel conversations the bot stores (docs/memory.md).
StoredTurns = Callable[[int, Collection[int]], Mapping[int, list[dict[str, Any]]]]


def stm_contribution(
    *,
    server_id: int | None,
    context: StmContext,
    now: datetime,
    include_expired: bool = False,
    stored_turns: StoredTurns | None = None,
) -> Contribution:
    """The contributor's result for one turn, from the stored entries. With `stored_turns`, an entry
    of this server's channel that has a stored conversation shows that conversation's last turns
    instead of the copy `stm/turns` keeps.

    A constant number of queries whatever the number of entries. Any error gives the empty
    contribution (no items), logged.
    """
    return load_stm(
        server_id=server_id,
        context=context,
        now=now,
        include_expired=include_expired,
        stored_turns=stored_turns,
    ).contribution


def load_stm(
    *,
    server_id: int | None,
    context: StmContext,
    now: datetime,
    include_expired: bool = False,
    with_rows: bool = False,
    stored_turns: StoredTurns | None = None,
) -> LoadedStm:
    """Like `stm_contribution`, with the user's consents, whether the turn is a DM and (`with_rows`)
    the entry rows for display (the review page and the CLI)."""
    try:
        return _load(
            server_id=server_id,
            context=context,
            now=now,
            include_expired=include_expired,
            with_rows=with_rows,
            stored_turns=stored_turns,
        )
    except Exception:
        logger.exception("short-term memory could not be loaded; no memory items this turn")
        return LoadedStm(contribution=EMPTY, entries={}, dm=context.dm, consents=frozenset())


def _load(
    *,
    server_id: int | None,
    context: StmContext,
    now: datetime,
    include_expired: bool,
    with_rows: bool,
    stored_turns: StoredTurns | None = None,
) -> LoadedStm:
    config = stm_settings()
    channel_ids = {context.channel} | ({context.parent_channel} if context.parent_channel else set())
    # Only the asking server's own channel rows: another server's row for the same id is its record.
    channels = server_selectors.owned_channels(server_id, channel_ids) if server_id is not None else {}
    current = channels.get(context.channel)
    if current is not None and current.parent is not None:
        channels.setdefault(current.parent.discord_id, current.parent)
    parent_id = context.parent_channel or (current.parent.discord_id if current and current.parent else None)
    dm = context.dm or (current is not None and current.is_dm)
    home = None if dm else server_id

    bypass = receive = False
    if server_id is not None:
        row = Server.objects.filter(pk=server_id).values_list(
            "stm_privacy_bypass", "stm_receive_other_servers"
        )
        bypass, receive = row.first() or (False, False)
        bypass = bool(bypass) and home is not None
    # Another server's memories come in only when this server's admins let them (off by default):
    # a consent a hostile server's bot relayed must not write into this server's prompts.
    consents = consenting_servers(context.user)
    policy = StmPolicy(
        server_id=home,
        privacy_bypass=bypass,
        # without receiving, only this server's own consent counts (its memories in its own DMs)
        consenting_servers=consents if receive else consents & frozenset([server_id or 0]),
        channel_private=bool(current and current.is_private),
        parent_private=bool(parent_id in channels and channels[parent_id].is_private),
    )

    # Home entries (any user: server memories are shared; in a DM, the user's own DM entries that
    # this server's bot stored) plus the user's entries in other servers, which the contributor shows
    # or hides by each server's consent. Another server's DM entries are its own: never candidates.
    in_servers = Q(user_id=context.user, server__isnull=False)
    if home is None:
        scope = Q(user_id=context.user, owner_id=server_id, server__isnull=True) | in_servers
    else:
        # the user's own DM entries this server stored are listed too (the contributor hides them)
        own_dms = Q(user_id=context.user, owner_id=home, server__isnull=True)
        scope = Q(owner_id=home, server_id=home) | own_dms | (in_servers & ~Q(server_id=home))
    rows = StmEntry.objects.filter(scope, lineage=context.lineage)
    if not include_expired:
        rows = rows.exclude(expired_q(now=now, config=config))
    # Plain tuples, not model instances: a server may have thousands of channels.
    snapshots = [_snapshot(*values) for values in rows.values_list(*_SNAPSHOT_FIELDS)]
    if stored_turns is not None and home is not None:
        turns = stored_turns(home, {s.channel for s in snapshots if s.server_id == home})
        snapshots = [
            replace(s, messages=tuple(_message(m) for m in turns[s.channel]))
            if s.server_id == home and s.channel in turns
            else s
            for s in snapshots
        ]
    contribution = contribute(
        entries=snapshots,
        context=context if context.dm == dm else replace(context, dm=dm),
        settings=config,
        now=now,
        policy=policy,
    )
    entries: dict[int, StmEntry] = {}
    if with_rows:
        ids = [s.entry_id for s in snapshots]
        entries = {
            row.id: row
            for row in StmEntry.objects.filter(id__in=ids).select_related("channel__parent", "user", "server")
        }
    return LoadedStm(contribution=contribution, entries=entries, dm=dm, consents=consents)


_SNAPSHOT_FIELDS = (
    "id",
    "server_id",
    "channel__discord_id",
    "user_id",
    "updated_at",
    "lineage",
    "channel__parent__discord_id",
    "channel__is_private",
    "channel__parent__is_private",
    "summary",
    "messages",
)


def _snapshot(
    entry_id: int,
    server_id: int | None,
    channel_id: int,
    user_id: int,
    updated_at: datetime,
    lineage: str,
    parent_id: int | None,
    channel_private: bool,
    parent_private: bool | None,
    summary: str,
    messages: list,
) -> EntrySnapshot:
    return EntrySnapshot(
        entry_id=entry_id,
        server_id=server_id,
        channel=channel_id,
        user=user_id,
        updated_at=updated_at,
        lineage=lineage,
        parent_channel=parent_id,
        channel_private=channel_private,
        parent_private=bool(parent_private),
        summary=summary,
        messages=tuple(_message(m) for m in messages if isinstance(m, dict)),
    )


def _message(raw: dict) -> StmMessage:
    return StmMessage(
        role=str(raw.get("role", "")),
        name=str(raw.get("name", "")),
        content=str(raw.get("content", "")),
        timestamp=str(raw.get("timestamp", "")),
    )


def consenting_servers(user_id: int) -> frozenset[int]:
    """The servers whose bot relayed this user's consent to let their memories surface elsewhere."""
    return frozenset(StmConsent.objects.filter(user_id=user_id).values_list("server_id", flat=True))


def user_names(server_id: int, user_ids: list[int]) -> dict[int, str]:
    """The display names this server's bot reported for these users (names are per server)."""
    rows = DiscordUserName.objects.filter(server_id=server_id, user_id__in=user_ids)
    return dict(rows.values_list("user_id", "name"))


def discord_user(user_id: int) -> DiscordUser | None:
    """A known Discord user, or None."""
    return DiscordUser.objects.filter(pk=user_id).first()


def users_seen_in(server: Server) -> list[tuple[int, str]]:
    """Users with an entry on this server, as (id, the name this server's bot reported or ""), for the
    review page's user picker."""
    ids = list(
        DiscordUser.objects.filter(stm_entries__owner=server, stm_entries__server=server)
        .distinct()
        .order_by("id")
        .values_list("id", flat=True)
    )
    names = user_names(server.pk, ids)
    return sorted(((i, names.get(i, "")) for i in ids), key=lambda pair: (pair[1].casefold(), pair[0]))


def entries_for_api(*, server_id: int, now: datetime, channel: int | None = None) -> list[StmEntry]:
    """The server's own live entries (its DM entries included), newest first (the bot API's list)."""
    rows = live_entries(now=now).filter(owner_id=server_id).select_related("channel")
    if channel is not None:
        rows = rows.filter(channel__discord_id=channel)
    return list(rows.order_by("-updated_at", "-id"))
