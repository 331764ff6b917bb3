"""Reads for servers."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import QuerySet

from core.resilient_cache import cache_get, cache_set

from .models import ApiToken, AuditEvent, Server, ServerDirectory

TOKENIZER_SECONDS = 24 * 3600
DIRECTORY_SECONDS = 3600
DEFAULT_TOKENIZER = "o200k_base"


def tokenizer_key(server_id: int) -> str:
    return f"tk:tokenizer:{server_id}"


def tokenizer_for(server_id: int) -> str:
    """The tokenizer the server's token counts use (docs/assembly.md#tokens); cached, so a warm assembly makes
    no query. An unknown server counts with the default."""
    cached = cache_get(tokenizer_key(server_id))
    if isinstance(cached, str):
        return cached
    found = Server.objects.filter(pk=server_id).values_list("token_encoding", flat=True).first()
    encoding = found or DEFAULT_TOKENIZER
    cache_set(tokenizer_key(server_id), encoding, TOKENIZER_SECONDS)
    return encoding


def tokens_for(server: Server) -> QuerySet[ApiToken]:
    return server.api_tokens.select_related("created_by").order_by("revoked_at", "-created_at")


def audit_for(server: Server, *, limit: int = 200) -> list[AuditEvent]:
    return list(
        AuditEvent.objects.filter(server=server)
        .select_related("actor")
        .order_by("-created_at", "-id")[:limit]
    )


def directory_key(server_id: int) -> str:
    return f"tk:directory:{server_id}"


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
    """The server's stored directory as pushed (for the API's GET), or None before the first push."""
    return ServerDirectory.objects.filter(server_id=server_id).first()


def directory_names(server_id: int) -> DirectoryNames:
    """Channel and member names by id for the pages; cached until the next push."""
    cached = cache_get(directory_key(server_id))
    if isinstance(cached, DirectoryNames):
        return cached
    directory = directory_for(server_id)
    names = DirectoryNames(
        channels={c["id"]: c["name"] for c in directory.channels} if directory else {},
        members={m["id"]: m["display_name"] for m in directory.members} if directory else {},
    )
    cache_set(directory_key(server_id), names, DIRECTORY_SECONDS)
    return names
