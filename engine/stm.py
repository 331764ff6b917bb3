"""The short-term memory contributor (docs/memory.md): stored entries in, prompt items and verdicts out.

Pure: plain Python over frozen dataclasses, no Django. The selector (`memory.selectors`) loads the
candidates and the server/user/channel facts, then calls `contribute`; the assembler, the review page
and the CLI all read its result, so the verdicts shown to moderators are the ones the prompt obeyed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

logger = logging.getLogger(__name__)

SUMMARY_MAX_CHARS = 1500
MAX_MESSAGES = 10
TOOL_NAME = "update_short_term_memory"

# Item kinds, so the assembler can tell the same-channel summary from the memories of elsewhere.
OTHER_CHANNELS = "other_channels"
SAME_CHANNEL_SUMMARY = "same_channel_summary"
TOOL_HINT = "tool_hint"

# Verdicts, in the order they are tried (docs/memory.md): the first that applies is the entry's verdict.
EXPIRED = "expired"
SAME_CHANNEL = "same_channel"
HIDDEN_NO_OPT_IN = "hidden_no_opt_in"
HIDDEN_PRIVATE_CHANNEL = "hidden_private_channel"
HIDDEN_PRIVATE_PARENT = "hidden_private_parent"
CUT_BY_CAP = "cut_by_cap"
SHOWN = "shown"
VERDICTS = (
    EXPIRED,
    SAME_CHANNEL,
    HIDDEN_NO_OPT_IN,
    HIDDEN_PRIVATE_CHANNEL,
    HIDDEN_PRIVATE_PARENT,
    CUT_BY_CAP,
    SHOWN,
)


@dataclass(frozen=True, slots=True)
class StmContext:
    """The contributor's inputs for one assembly (the bucket document's `stm_context`)."""

    channel: int
    user: int
    parent_channel: int | None = None
    lineage: str = ""
    has_tools: bool = False
    provider: str = ""
    long_term_intent: bool = False
    impersonation: bool = False
    dm: bool = False
    bot_name: str = ""


@dataclass(frozen=True, slots=True)
class StmItem:
    """One prompt item for the KNOWLEDGE_SHORT_TERM_MEMORY bucket.

    `kind` says which it is: OTHER_CHANNELS (the memory blocks), SAME_CHANNEL_SUMMARY (what
    `{{summary}}` also resolves to) or TOOL_HINT.
    """

    role: str
    text: str
    kind: str = OTHER_CHANNELS


@dataclass(frozen=True, slots=True)
class EntryVerdict:
    """What the contributor decided about one stored entry; `verdict` is one of VERDICTS."""

    entry_id: int
    channel: int
    server_id: int | None
    verdict: str


@dataclass(frozen=True, slots=True)
class Contribution:
    items: tuple[StmItem, ...]
    tail_directive: str | None
    same_channel_summary: str
    verdicts: tuple[EntryVerdict, ...]


EMPTY = Contribution(items=(), tail_directive=None, same_channel_summary="", verdicts=())


@dataclass(frozen=True, slots=True)
class StmMessage:
    """One cached message of an entry (the same message shape as the assembler's history)."""

    role: str
    name: str
    content: str
    timestamp: str = ""


@dataclass(frozen=True, slots=True)
class EntrySnapshot:
    """A stored entry with the privacy facts of its channel, as the selector read them.

    `server_id` is None for a direct-message entry.
    """

    entry_id: int
    server_id: int | None
    channel: int
    user: int
    updated_at: datetime
    lineage: str = ""
    parent_channel: int | None = None
    channel_private: bool = False
    parent_private: bool = False
    summary: str = ""
    messages: tuple[StmMessage, ...] = ()


@dataclass(frozen=True, slots=True)
class StmSettings:
    ttl_hours: float = 12
    summary_ttl_hours: float = 24
    max_other_channels: int = 3
    min_messages_for_summary: int = 6


@dataclass(frozen=True, slots=True)
class StmPolicy:
    """Facts about where the assembly happens: the server (None in a DM), its bypass, the servers
    whose bot relayed the user's consent (each lets its own memories of the user surface elsewhere),
    and whether the current channel or its parent is private."""

    server_id: int | None
    privacy_bypass: bool = False
    consenting_servers: frozenset[int] = frozenset()
    channel_private: bool = False
    parent_private: bool = False


def is_expired(entry: EntrySnapshot, *, settings: StmSettings, now: datetime) -> bool:
    """True when the entry's age is strictly over its TTL (longer for an entry with a summary)."""
    ttl = settings.summary_ttl_hours if entry.summary else settings.ttl_hours
    return now - entry.updated_at > timedelta(hours=ttl)


def contribute(
    *,
    entries: Sequence[EntrySnapshot],
    context: StmContext,
    settings: StmSettings,
    now: datetime,
    policy: StmPolicy | None = None,
) -> Contribution:
    """The items, tail directive, `{{summary}}` text and one verdict per entry for this turn.

    Never raises: any error gives the empty contribution (no items), logged.
    """
    try:
        return _contribute(
            entries=entries,
            context=context,
            settings=settings,
            now=now,
            policy=policy or StmPolicy(server_id=None),
        )
    except Exception:
        logger.exception("short-term memory contributor failed; no memory items this turn")
        return EMPTY


def _contribute(
    *,
    entries: Sequence[EntrySnapshot],
    context: StmContext,
    settings: StmSettings,
    now: datetime,
    policy: StmPolicy,
) -> Contribution:
    home = None if context.dm else policy.server_id
    privacy_applies = not (
        context.dm or policy.privacy_bypass or policy.channel_private or policy.parent_private
    )
    newest_first = sorted(entries, key=lambda e: (e.updated_at, e.entry_id), reverse=True)

    verdicts: dict[int, str] = {}
    same_channel: EntrySnapshot | None = None
    shown: list[EntrySnapshot] = []
    for entry in newest_first:
        if is_expired(entry, settings=settings, now=now):
            verdict = EXPIRED
        elif entry.channel == context.channel and entry.server_id == home:
            # the same Discord id elsewhere is another server's record (ids live in per-server
            # namespaces, docs/memory.md), never this channel's memory
            verdict = SAME_CHANNEL
        else:
            verdict = _hidden(entry, home=home, policy=policy, privacy_applies=privacy_applies) or (
                CUT_BY_CAP if len(shown) >= settings.max_other_channels else SHOWN
            )
        if verdict == SAME_CHANNEL and same_channel is None:
            same_channel = entry
        elif verdict == SHOWN:
            shown.append(entry)
        verdicts[entry.entry_id] = verdict

    items: list[StmItem] = []
    if shown:
        blocks = [_memory_block(e, context=context, home=home, now=now) for e in shown]
        items.append(StmItem(role="user", text="\n\n".join(blocks), kind=OTHER_CHANNELS))

    summary = same_channel.summary if same_channel else ""
    tool_available = (
        context.has_tools and context.provider.strip().lower() != "novelai" and not context.impersonation
    )
    if same_channel is not None and summary and context.has_tools:
        age = _ago(now - same_channel.updated_at)
        items.append(
            StmItem(
                role="user",
                text=f"[System: Short-term memory of this channel (updated {age}): {summary}]",
                kind=SAME_CHANNEL_SUMMARY,
            )
        )
        if tool_available and not context.long_term_intent:
            items.append(StmItem(role="user", text=_tool_hint(), kind=TOOL_HINT))

    tail = None
    cached = len(same_channel.messages) if same_channel else 0
    if not summary and tool_available and cached >= settings.min_messages_for_summary:
        tail = _create_directive()

    return Contribution(
        items=tuple(items),
        tail_directive=tail,
        same_channel_summary=summary,
        verdicts=tuple(
            EntryVerdict(
                entry_id=e.entry_id, channel=e.channel, server_id=e.server_id, verdict=verdicts[e.entry_id]
            )
            for e in newest_first
        ),
    )


def _hidden(
    entry: EntrySnapshot, *, home: int | None, policy: StmPolicy, privacy_applies: bool
) -> str | None:
    """Why an entry of another channel is kept out of the prompt, or None when it is a candidate.

    Another server's entries need the user's consent relayed by *that* server (consent relayed by
    the server asking opens nothing of anyone else's); a DM's entries never reach a server, since no
    server's bot can speak for a DM. Private channels elsewhere stay hidden whatever this server's
    bypass says, because the bypass is this server's own.
    """
    elsewhere = entry.server_id != home
    if elsewhere and (entry.server_id is None or entry.server_id not in policy.consenting_servers):
        return HIDDEN_NO_OPT_IN
    if elsewhere or privacy_applies:
        if entry.channel_private:
            return HIDDEN_PRIVATE_CHANNEL
        if entry.parent_private:
            return HIDDEN_PRIVATE_PARENT
    return None


def _memory_block(entry: EntrySnapshot, *, context: StmContext, home: int | None, now: datetime) -> str:
    if entry.server_id is None:
        where = "a direct message"
    elif entry.server_id != home:
        where = "a channel in another server"
    else:
        where = f"<#{entry.channel}>"
    who = f"{context.bot_name} remembers" if context.bot_name.strip() else "You remember"
    body = entry.summary or "\n".join(_message_line(m) for m in entry.messages)
    return f"[System: {who} a recent conversation in {where} ({_ago(now - entry.updated_at)}): {body}]"


def _message_line(message: StmMessage) -> str:
    speaker = message.name.strip() or message.role
    return f"{speaker}: {message.content}"


def _tool_hint() -> str:
    return (
        "[System: Keep this channel's short-term memory current: when the conversation moves on, "
        f"call the {TOOL_NAME} tool with a fresh summary of at most {SUMMARY_MAX_CHARS} characters.]"
    )


def _create_directive() -> str:
    return (
        "After you respond, create a short-term memory of this conversation: call the "
        f"{TOOL_NAME} tool with a concise summary of at most {SUMMARY_MAX_CHARS} characters."
    )


def _ago(age: timedelta) -> str:
    """A short English age: 'just now', '5 minutes ago', '2 hours ago', '3 days ago'."""
    seconds = max(0, int(age.total_seconds()))
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'} ago"
    return "just now"
