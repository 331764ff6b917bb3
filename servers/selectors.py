"""Reads for servers."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from django.db.models import QuerySet, Subquery

from .generational_cache import GenerationalCache
from .models import ApiToken, AuditEvent, Channel, Server, ServerDirectory

DEFAULT_TOKENIZER = "o200k_base"


def _load_tokenizer(server_id: int) -> str:
    found = Server.objects.filter(pk=server_id).values_list("token_encoding", flat=True).first()
    return found or DEFAULT_TOKENIZER


# Stamp `tokenizer`, bumped by servers.services.server_tokenizer_set inside its transaction.
TOKENIZER: GenerationalCache[int, str, str] = GenerationalCache(
    name="tokenizer", load=_load_tokenizer, valid=lambda plain: isinstance(plain, str)
)
TOKENIZER_STAMP = TOKENIZER.stamp


def tokenizer_for(server_id: int) -> str:
    """The tokenizer the server's token counts use (docs/assembly.md#tokens); cached, so a warm assembly makes
    no query. An unknown server counts with the default."""
    return TOKENIZER.get(server_id)


def tokens_for(server: Server) -> QuerySet[ApiToken]:
    return server.api_tokens.select_related("created_by").order_by("revoked_at", "-created_at")


def audit_for(server: Server, *, limit: int = 200) -> list[AuditEvent]:
    return list(
        AuditEvent.objects.filter(server=server)
        .select_related("actor")
        .order_by("-created_at", "-id")[:limit]
    )


@dataclass(frozen=True, slots=True)
class DirectoryNames:
    """The names the bot pushed for a server, by Discord id (empty until the first push)."""

    channels: dict[int, str] = field(default_factory=dict)
    members: dict[int, str] = field(default_factory=dict)

    def channel(self, channel_id: int | None) -> str:
        return self.channels.get(channel_id, "") if channel_id is not None else ""

    def member(self, user_id: int | None) -> str:
        return self.members.get(user_id, "") if user_id is not None else ""


def directory_for(server_id: int) -> ServerDirectory | None:
    """The server's stored directory as pushed (its members, for the API's GET), or None before the
    first push; its channels are `directory_channels`."""
    return ServerDirectory.objects.filter(server_id=server_id).first()


def directory_channels(server_id: int) -> list[Channel]:
    """The channels of the server's latest directory push, with their parents, in row order."""
    rows = Channel.objects.filter(owner_id=server_id, server_id=server_id, listed=True)
    return list(rows.select_related("parent").order_by("id"))


def _load_directory_names(server_id: int) -> DirectoryNames:
    directory = directory_for(server_id)
    listed = Channel.objects.filter(owner_id=server_id, server_id=server_id, listed=True)
    return DirectoryNames(
        channels=dict(listed.values_list("discord_id", "name")),
        members={m["id"]: m["display_name"] for m in directory.members} if directory else {},
    )


# Stamp `directory`, bumped by servers.services.directory_replace inside its transaction. The pages
# that show the names read the database anyway: no stale copy.
DIRECTORY: GenerationalCache[int, DirectoryNames, DirectoryNames] = GenerationalCache(
    name="directory",
    load=_load_directory_names,
    stale=False,
    valid=lambda plain: isinstance(plain, DirectoryNames),
)
DIRECTORY_STAMP = DIRECTORY.stamp


def directory_names(server_id: int) -> DirectoryNames:
    """Channel and member names by id for the pages; cached until the next push."""
    return DIRECTORY.get(server_id)


# Channels: one row per (server, Discord id), written by servers.services.channel_ensure and the
# directory push. Other apps name a channel by its Discord id and read its facts here.


def channel_by_id(server_id: int, channel_id: int) -> Channel | None:
    """This server's row for Discord channel `channel_id` (a server channel or a DM), or None."""
    return Channel.objects.filter(owner_id=server_id, discord_id=channel_id).select_related("parent").first()


def owned_channels(server_id: int, channel_ids: Collection[int]) -> dict[int, Channel]:
    """This server's rows among `channel_ids` (server channels and DMs), with parents, by Discord id."""
    rows = Channel.objects.filter(owner_id=server_id, discord_id__in=list(channel_ids))
    return {channel.discord_id: channel for channel in rows.select_related("parent")}


def channels_by_id(server_id: int, channel_ids: Collection[int]) -> dict[int, Channel]:
    """The server's known channels among `channel_ids` (name and parent), by Discord id."""
    rows = Channel.objects.filter(owner_id=server_id, server_id=server_id, discord_id__in=list(channel_ids))
    return {channel.discord_id: channel for channel in rows.select_related("parent")}


def channel_parent(server_id: int, channel_id: int) -> int | None:
    """The Discord id of the parent channel of one of the server's threads, else None."""
    return (
        Channel.objects.filter(owner_id=server_id, server_id=server_id, discord_id=channel_id)
        .values_list("parent__discord_id", flat=True)
        .first()
    )


def channel_parent_subquery(server_id: int, channel_id: int) -> Subquery:
    """`channel_parent` as a subquery, for a read that must stay one query (a stored channel's
    assembly): the parent's Discord id, or NULL."""
    rows = Channel.objects.filter(owner_id=server_id, server_id=server_id, discord_id=channel_id)
    return Subquery(rows.values("parent__discord_id")[:1])


def _channel_parent_sql() -> str:
    """`channel_parent_subquery` written once as SQL, for a caller that keeps its one statement as
    text; it takes the server's id twice and the channel's Discord id, in that order."""
    table = Channel._meta.db_table
    column = {f.name: f.column for f in Channel._meta.concrete_fields}
    return (
        f"(SELECT parent.{column['discord_id']} FROM {table} child "  # noqa: S608
        f"JOIN {table} parent ON parent.{column['id']} = child.{column['parent']} "
        f"WHERE child.{column['owner']} = %s AND child.{column['server']} = %s "
        f"AND child.{column['discord_id']} = %s)"
    )


CHANNEL_PARENT_SQL = _channel_parent_sql()


def channels_for(server: Server) -> list[Channel]:
    """The server's known channels (not its DMs), by name, with their parents."""
    rows = Channel.objects.filter(owner=server, server=server).select_related("parent")
    return list(rows.order_by("name", "discord_id"))
