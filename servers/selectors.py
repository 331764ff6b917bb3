"""Reads for servers."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import QuerySet

from .generational_cache import GenerationalCache
from .models import ApiToken, AuditEvent, Server, ServerDirectory

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
    """The server's stored directory as pushed (for the API's GET), or None before the first push."""
    return ServerDirectory.objects.filter(server_id=server_id).first()


def _load_directory_names(server_id: int) -> DirectoryNames:
    directory = directory_for(server_id)
    return DirectoryNames(
        channels={c["id"]: c["name"] for c in directory.channels} if directory else {},
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
