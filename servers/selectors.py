"""Reads for servers."""

from __future__ import annotations

from django.db.models import QuerySet

from .models import ApiToken, AuditEvent, Server
from .resilient_cache import cache_get, cache_set

TOKENIZER_SECONDS = 24 * 3600
DEFAULT_TOKENIZER = "o200k_base"


def tokenizer_key(server_id: int) -> str:
    return f"tk:tokenizer:{server_id}"


def tokenizer_for(server_id: int) -> str:
    """The tokenizer the server's token counts use (SPEC §10.4); cached, so a warm assembly makes no
    query. An unknown server counts with the default."""
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
