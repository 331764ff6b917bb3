"""Reads for channel conversations (docs/channels.md): the stored messages, the variables, the
history an assembly starts from, and the pages' views."""

from __future__ import annotations

import copy
import json
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Count, F, QuerySet, Window
from django.db.models.functions import RowNumber

from core.errors import UserError
from engine import BoundedCache, BucketError, HistoryMessage, MiB, history_messages
from engine import groups as engine_groups
from engine.macros import Op, OpError, ops_from_json, replay_into_cache
from servers import generational_cache
from servers import selectors as server_selectors
from servers.audit_actions import AuditAction
from servers.models import AuditEvent
from servers.snowflakes import snowflake_text

from ..models import (
    ChannelConversation,
    ChannelMessage,
    ChannelMessagePart,
    ChannelRole,
    ChannelSettings,
    MessageRole,
)

DEFAULT_KEEP_MESSAGES = 500
DEFAULT_KEEP_DAYS = 30


def channel_settings(server_id: int) -> ChannelSettings:
    """The server's channel rules, or the defaults (unsaved) when it never changed them."""
    return ChannelSettings.objects.filter(server_id=server_id).first() or ChannelSettings(server_id=server_id)


def conversation_for(server_id: int, channel_id: int) -> ChannelConversation | None:
    return ChannelConversation.objects.filter(server_id=server_id, channel_id=channel_id).first()


def conversations_of(server_id: int) -> QuerySet[ChannelConversation]:
    """The server's stored channels, most recently changed first, each with `message_count`."""
    return ChannelConversation.objects.filter(server_id=server_id).annotate(message_count=Count("messages"))


def stored_channel_ids(server_id: int, *, limit: int = 200) -> list[int]:
    """The server's stored channels, most recently changed first (for a select)."""
    return list(
        ChannelConversation.objects.filter(server_id=server_id)
        .order_by("-updated_at", "id")
        .values_list("channel_id", flat=True)[:limit]
    )


def messages_of(conversation: ChannelConversation) -> list[ChannelMessage]:
    """The conversation's messages in Discord's order (one query)."""
    return list(ChannelMessage.objects.filter(conversation=conversation).order_by("discord_id"))


def current_swipe(message: ChannelMessage) -> dict[str, Any]:
    swipes = message.swipes or [{"content": "", "ops": []}]
    return swipes[min(message.current, len(swipes) - 1)]


def current_ops(message: ChannelMessage) -> tuple[Op, ...]:
    """The current swipe's ops; () when the stored list cannot be read (then nothing replays from it)."""
    try:
        return ops_from_json(current_swipe(message).get("ops"))
    except OpError:
        return ()


def speaker_name(message: ChannelMessage) -> str:
    """The name the history gives the message: a group member's name for its replies, else the author's."""
    return message.speaker or message.author_name


def message_json(message: ChannelMessage, parts: Sequence[int] = ()) -> dict[str, Any]:
    """One message as the API answers it (docs/channels.md#events)."""
    swipe = current_swipe(message)
    return {
        "id": snowflake_text(message.discord_id),
        "role": message.role,
        "name": speaker_name(message),
        "content": swipe.get("content", ""),
        "ops": list(swipe.get("ops") or []),
        "swipe": message.current,
        "swipes": len(message.swipes or ()),
        "parts": [snowflake_text(part) for part in parts],
        **({PRIVATE_TO: message.private_to} if message.private_to else {}),
    }


def parts_by_message(conversation: ChannelConversation) -> dict[int, list[int]]:
    """The further Discord ids of each reply sent in parts, by message row id (one query)."""
    found: dict[int, list[int]] = {}
    rows = ChannelMessagePart.objects.filter(conversation=conversation).order_by("discord_id")
    for message_id, discord_id in rows.values_list("message_id", "discord_id"):
        found.setdefault(message_id, []).append(discord_id)
    return found


def state_before(
    conversation: ChannelConversation, messages: Sequence[ChannelMessage], discord_id: int
) -> dict[str, Any]:
    """The cache as it stood before message `discord_id`: its ops and the later messages' out of scope."""
    earlier = [current_ops(m) for m in messages if m.discord_id < discord_id]
    removed = [op for m in messages if m.discord_id >= discord_id for op in current_ops(m)]
    return replay_into_cache(
        conversation.variables or {}, base=conversation.base or {}, removed=removed, surviving=earlier
    ).variables


@dataclass(frozen=True, slots=True)
class StoredChat:
    """What an assembly reads of a stored channel: the history in the bucket document's shape, the
    variables the render starts from, and the channel it belongs to."""

    channel_id: int
    parent_id: int | None
    history: list[dict[str, Any]]
    variables: dict[str, Any]
    # The same messages read as a document's history reads them (engine.history_messages), one
    # for one, when this process holds the channel's history: kept with it, not read again per request.
    messages: tuple[HistoryMessage, ...] | None = None


class UnknownMessage(UserError, LookupError):
    """`regenerate` names no stored message of the channel (the API answers 404)."""

    status = 404

    def __init__(self, regenerate: int) -> None:
        super().__init__("`regenerate` names no stored message of this channel.")
        self.regenerate = regenerate


def stored_chat(server_id: int, channel_id: int, *, regenerate: int | None = None) -> StoredChat | None:
    """The channel's stored conversation as an assembly starts from it, or None when the server stores
    none for it: no query when this process read the channel as it stands (its stamp unchanged),
    else one or two. With
    `regenerate` the history ends before that message (or the reply a part of it belongs to) and the
    variables are the state before it; UnknownMessage when unknown."""
    if regenerate is None:
        row = _kept_channel_row(server_id, channel_id)
        if row is None:
            return None
        history, parsed = _history_copy(row.pk, row.updated_at)
        return StoredChat(channel_id, row.parent_id, history, _copy_of(row.variables), parsed)
    conversation = conversation_for(server_id, channel_id)
    if conversation is None:
        return None
    variables = dict(conversation.variables or {})
    rows = ChannelMessage.objects.filter(conversation=conversation).order_by("discord_id")
    if regenerate is not None:
        messages = messages_of(conversation)
        target = _message_or_part(conversation, messages, regenerate)
        if target is None:
            raise UnknownMessage(regenerate)
        variables = state_before(conversation, messages, target.discord_id)
        rows = rows.filter(discord_id__lt=target.discord_id)
    # Plain values, not model instances: this runs on every assembly from a stored channel.
    parent_id = server_selectors.channel_parent(server_id, channel_id)
    return StoredChat(conversation.channel_id, parent_id, _history_of(rows), variables)


@dataclass(frozen=True, slots=True)
class _ChannelRow:
    """What an assembly reads of the channel's row: its id, thread parent, variables and when it
    last changed (as the database returns it: only compared, as the history copy's key)."""

    pk: int
    parent_id: int | None
    variables: dict[str, Any]
    updated_at: Any


@dataclass(frozen=True, slots=True)
class _KeptRow:
    stamp: int
    checked: float  # time.monotonic() of the read
    row: _ChannelRow


# The channel rows this process read, each beside the channel's stamp as it stood before the read
# (servers.generational_cache.channel_stamp): a warm assembly from a stored channel makes no query.
CHANNEL_ROW_ENTRIES = 1024
CHANNEL_ROW_MAX_BYTES = 16 * MiB  # a row whose variables pass 2 MiB is read each time
_ROW_OVERHEAD = 300  # bytes a kept row costs beyond its variables' text
_ROWS: BoundedCache[tuple[int, int], _KeptRow] = BoundedCache(
    max_entries=CHANNEL_ROW_ENTRIES, max_bytes=CHANNEL_ROW_MAX_BYTES
)


def _kept_channel_row(server_id: int, channel_id: int) -> _ChannelRow | None:
    """The channel's row: this process's copy while the channel's stamp is the one it was read under
    (and it was read within CACHE_STAMP_CHECK_SECONDS), else the database's."""
    stamp = generational_cache.channel_stamp(server_id, channel_id)
    key = (server_id, channel_id)
    kept = _ROWS.get(key)
    now = time.monotonic()
    if (
        kept is not None
        and stamp is not None
        and kept.stamp == stamp
        and now - kept.checked < generational_cache.channel_check_seconds()
    ):
        return kept.row
    found = _channel_row(server_id, channel_id)
    if found is None:
        return None
    row, size = found
    if stamp is not None:
        _ROWS.put(key, _KeptRow(stamp, now, row), size + _ROW_OVERHEAD)
    return row


def _forget_row(server_id: int, channel_id: int) -> None:
    _ROWS.pop((server_id, channel_id))


generational_cache.on_channel_bump(_forget_row)


def forget_channel_rows() -> None:
    """Empty this process's channel rows (tests that stand in for a new process)."""
    _ROWS.clear()


def _copy_of(variables: dict[str, Any]) -> dict[str, Any]:
    """A copy the request may change without changing the kept row: a shallow one for the usual
    flat values, a deep one when a value is a list or an object."""
    if any(isinstance(value, dict | list) for value in variables.values()):
        return copy.deepcopy(variables)
    return dict(variables)


def _channel_row(server_id: int, channel_id: int) -> tuple[_ChannelRow, int] | None:
    """The channel's row and the length of its variables as stored, by one statement written once:
    building the query through the ORM cost more CPU than the database's answer."""
    global _CHANNEL_ROW_SQL
    if _CHANNEL_ROW_SQL is None:
        quote = connection.ops.quote_name
        column = {f.name: quote(f.column) for f in ChannelConversation._meta.concrete_fields}
        _CHANNEL_ROW_SQL = (
            f"SELECT {column['id']}, {server_selectors.CHANNEL_PARENT_SQL}, {column['variables']}, "  # noqa: S608
            f"{column['updated_at']} FROM {quote(ChannelConversation._meta.db_table)} "
            f"WHERE {column['server']} = %s AND {column['channel_id']} = %s"
        )
    with connection.cursor() as cursor:
        cursor.execute(_CHANNEL_ROW_SQL, [server_id, server_id, channel_id, server_id, channel_id])
        row = cursor.fetchone()
    if row is None:
        return None
    raw = row[2]
    variables = _VARIABLES.from_db_value(raw, None, connection)  # type: ignore[arg-type]
    size = len(raw) if isinstance(raw, str | bytes) else len(json.dumps(variables, default=str))
    return _ChannelRow(row[0], row[1], variables if isinstance(variables, dict) else {}, row[3]), size


_CHANNEL_ROW_SQL: str | None = None
_VARIABLES = ChannelConversation._meta.get_field("variables")


def _history_of(rows: QuerySet[ChannelMessage]) -> list[dict[str, Any]]:
    return [
        {
            "role": role,
            "name": speaker or author,
            "content": content,
            "timestamp": created.isoformat(),
            **({PRIVATE_TO: private_to} if private_to else {}),
        }
        for role, speaker, author, content, created, private_to in rows.values_list(
            "role", "speaker", "author_name", "content", "created_at", "private_to"
        )
    ]


# A private context's history entry names its member under this key; `for_speaker` drops the entry
# from every other speaker's history and the key from its own (the engine never sees it).
PRIVATE_TO = "private_to"


def for_speaker(history: Sequence[dict[str, Any]], speaker: str | None) -> list[dict[str, Any]]:
    """The history a speaker's prompt receives: the private contexts kept for it (as plain system
    messages), never another member's; without a speaker (not a group's turn), none of them."""
    kept: list[dict[str, Any]] = []
    for message in history:
        owner = message.get(PRIVATE_TO)
        if owner is None:
            kept.append(message)
        elif speaker is not None and owner == speaker:
            kept.append({key: value for key, value in message.items() if key != PRIVATE_TO})
    return kept


def messages_for_speaker(stored: StoredChat, speaker: str | None) -> list[Any]:
    """`for_speaker` of the stored history, as the messages already read (`StoredChat.messages`)
    when this process holds them, else as the entries."""
    if stored.messages is None:
        return for_speaker(stored.history, speaker)
    return [
        message
        for entry, message in zip(stored.history, stored.messages, strict=True)
        if (owner := entry.get(PRIVATE_TO)) is None or (speaker is not None and owner == speaker)
    ]


RECALL_QUERY_MAX_CHARS = engine_groups.RECALL_QUERY_MAX_CHARS  # the bound the tool declares
RECALL_MAX_RESULTS = 5
RECALL_RESULT_MAX_CHARS = 500
RECALL_SCAN_MESSAGES = 1_000  # the newest messages a recall reads
RECALL_SCAN_CHARS = 8_000  # of each, the first characters it scores
_WORD = re.compile(r"\w+")


def words_of(text: str) -> set[str]:
    return {word.casefold() for word in _WORD.findall(text)}


def recall(server_id: int, channel_id: int, query: str) -> list[dict[str, Any]]:
    """The channel's stored messages (current swipes) that share the most words with `query`, best
    first, at most RECALL_MAX_RESULTS, each cut to RECALL_RESULT_MAX_CHARS characters
    (docs/channels.md#recall). The score is how many distinct query words a message holds; a tie goes
    to the newer message. Private contexts are never recalled: the caller is not known to be their member."""
    wanted = words_of(query)
    if not wanted:
        return []
    rows = (
        ChannelMessage.objects.filter(conversation__server_id=server_id, conversation__channel_id=channel_id)
        .exclude(role=ChannelRole.SYSTEM)
        .order_by("-discord_id")
        .values_list("discord_id", "role", "speaker", "author_name", "content")[:RECALL_SCAN_MESSAGES]
    )
    scored: list[tuple[int, int, tuple[int, str, str, str]]] = []
    for discord_id, role, speaker, author, content in rows:
        score = len(wanted & words_of(content[:RECALL_SCAN_CHARS]))
        if score:
            scored.append((score, discord_id, (discord_id, role, speaker or author, content)))
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [
        {
            "id": snowflake_text(discord_id),
            "role": role,
            "name": name,
            "content": content[:RECALL_RESULT_MAX_CHARS],
        }
        for _, _, (discord_id, role, name, content) in scored[:RECALL_MAX_RESULTS]
    ]


# The history of recently assembled channels, per process, keyed by the conversation row and the time
# of its last change: every write saves the row (`updated_at`) under the channel's lock, so a changed
# channel is a new key and a warm assembly reads one row instead of every message.
_HISTORIES: OrderedDict[tuple[int, datetime], tuple[list[dict[str, Any]], tuple[HistoryMessage, ...]]] = (
    OrderedDict()
)
_HISTORIES_LOCK = threading.Lock()
HISTORY_CACHE_ENTRIES = 64
HISTORY_CACHE_MAX_CHARS = 1_000_000  # a longer history is read each time rather than held


def _history_copy(
    conversation_id: int, updated_at: Any
) -> tuple[list[dict[str, Any]], tuple[HistoryMessage, ...] | None]:
    """The channel's history as of `updated_at`, and its messages read once (None when the history
    is too long to hold)."""
    key = (conversation_id, updated_at)
    with _HISTORIES_LOCK:
        cached = _HISTORIES.get(key)
        if cached is not None:
            _HISTORIES.move_to_end(key)
            return list(cached[0]), cached[1]
    history = _history_of(
        ChannelMessage.objects.filter(conversation_id=conversation_id).order_by("discord_id")
    )
    if sum(len(m["content"]) for m in history) > HISTORY_CACHE_MAX_CHARS:
        return list(history), None
    # Private contexts read without their owner's key, as `for_speaker` passes them on.
    try:
        messages = history_messages([{k: v for k, v in m.items() if k != PRIVATE_TO} for m in history])
    except BucketError:  # a message the document would refuse: the request reads the entries and says so
        return list(history), None
    with _HISTORIES_LOCK:
        _HISTORIES[key] = (history, messages)
        while len(_HISTORIES) > HISTORY_CACHE_ENTRIES:
            _HISTORIES.popitem(last=False)
    return list(history), messages


def forget_histories() -> None:
    """Empty this process's history copies (tests that stand in for a new process)."""
    with _HISTORIES_LOCK:
        _HISTORIES.clear()


def _message_or_part(
    conversation: ChannelConversation, messages: Sequence[ChannelMessage], discord_id: int
) -> ChannelMessage | None:
    for message in messages:
        if message.discord_id == discord_id:
            return message
    owner = (
        conversation.messages.filter(parts__discord_id=discord_id)
        .values_list("discord_id", flat=True)
        .first()
    )
    return next((m for m in messages if m.discord_id == owner), None) if owner is not None else None


def recent_turns(
    server_id: int, channel_ids: Collection[int], *, limit: int = 10
) -> dict[int, list[dict[str, Any]]]:
    """The last `limit` stored messages of each of the server's channels among `channel_ids` that has
    a stored conversation, by channel, as short-term memory keeps turns (`{role, name, content,
    timestamp}`, oldest first). Two queries at most, whatever the number of channels."""
    conversations = dict(
        ChannelConversation.objects.filter(server_id=server_id, channel_id__in=list(channel_ids)).values_list(
            "pk", "channel_id"
        )
    )
    if not conversations:
        return {}
    rows = (
        ChannelMessage.objects.filter(conversation_id__in=list(conversations))
        .exclude(role=ChannelRole.SYSTEM)  # a member's private context is not the channel's talk
        .annotate(
            rank=Window(RowNumber(), partition_by=[F("conversation_id")], order_by=F("discord_id").desc())
        )
        .filter(rank__lte=limit)
        .order_by("conversation_id", "discord_id")
    )
    turns: dict[int, list[dict[str, Any]]] = {}
    for m in rows:
        turns.setdefault(conversations[m.conversation_id], []).append(
            {
                "role": m.role,
                "name": speaker_name(m),
                "content": m.content,
                "timestamp": m.created_at.isoformat(),
            }
        )
    return turns


@dataclass(frozen=True, slots=True)
class MessageRow:
    """A stored message as the moderators' page shows it."""

    message: ChannelMessage
    id: str
    role: str
    name: str
    author: str
    content: str
    ops: tuple[Op, ...]
    swipe: int
    swipes: int
    private_to: str


def message_rows(conversation: ChannelConversation) -> list[MessageRow]:
    return [
        MessageRow(
            message=m,
            id=str(m.discord_id),
            role=m.role,
            name=speaker_name(m),
            author=m.author_name if m.role == MessageRole.USER else (m.speaker or "the bot"),
            content=current_swipe(m).get("content", ""),
            ops=current_ops(m),
            swipe=m.current + 1,
            swipes=len(m.swipes or ()),
            private_to=m.private_to,
        )
        for m in messages_of(conversation)
    ]


def forget_records(server_id: int, channel_id: int | None = None, *, limit: int = 50) -> list[AuditEvent]:
    """What was forgotten on the server (the channel's, when given) and when, newest first."""
    events = AuditEvent.objects.filter(
        server_id=server_id, action__in=(AuditAction.CHANNEL_FORGET, AuditAction.CHANNEL_MEMBER_FORGET)
    ).order_by("-id")
    rows = list(events[: limit * 4])
    if channel_id is not None:
        key = str(channel_id)
        rows = [
            e
            for e in rows
            if key in (e.detail or {}).get("channels", []) or (e.detail or {}).get("channel") == key
        ]
    return rows[:limit]
