"""An upload that stopped at a name clash, kept briefly so its user can finish it with "Replace" or
"Keep both" without choosing the file again.

Kept in the shared cache (Redis in production, so any web process can finish it), one per user: a
newer clash replaces an older one. It expires after settings.PRESET_PENDING_UPLOAD_SECONDS and is deleted once used. A
token in the form ties the buttons to this upload, so a stale page cannot finish a different one.
When the cache is down nothing is kept and the page asks for the file again.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.conf import settings

from core.resilient_cache import cache_delete, cache_get, cache_set

from .forms import UploadOptions


def pending_seconds() -> int:
    """How long a clashing upload is kept."""
    return settings.PRESET_PENDING_UPLOAD_SECONDS


@dataclass(frozen=True, slots=True)
class PendingUpload:
    token: str
    server_id: int
    raw: bytes
    filename: str
    options: UploadOptions


def _key(user_id: int) -> str:
    return f"presets:pending-upload:{user_id}"


def keep_upload(
    *, user_id: int, server_id: int, raw: bytes, filename: str, options: UploadOptions
) -> str | None:
    """Keep the upload for its user; the token the form carries, or None when the cache is down."""
    token = secrets.token_urlsafe(16)
    pending = PendingUpload(token=token, server_id=server_id, raw=raw, filename=filename, options=options)
    return token if cache_set(_key(user_id), pending, pending_seconds()) else None


def pending_upload(*, user_id: int, server_id: int, token: str) -> PendingUpload | None:
    """The user's kept upload for this server and token, or None (expired, used, or another one)."""
    pending = cache_get(_key(user_id))
    if not isinstance(pending, PendingUpload) or pending.server_id != server_id:
        return None
    return pending if secrets.compare_digest(pending.token, token) else None


def drop_upload(*, user_id: int) -> None:
    cache_delete(_key(user_id))
