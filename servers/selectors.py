"""Reads for servers."""

from __future__ import annotations

from django.db.models import QuerySet

from .models import ApiToken, AuditEvent, Server


def tokens_for(server: Server) -> QuerySet[ApiToken]:
    return server.api_tokens.select_related("created_by").order_by("revoked_at", "-created_at")


def audit_for(server: Server, *, limit: int = 200) -> list[AuditEvent]:
    return list(
        AuditEvent.objects.filter(server=server)
        .select_related("actor")
        .order_by("-created_at", "-id")[:limit]
    )
