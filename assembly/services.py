"""Writes for assembly: the server's sample bucket documents (validated, audited)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from engine import BucketError, parse_buckets
from servers.audit_actions import AuditAction
from servers.models import AuditEvent, Server
from servers.users import User

from .bucket_models import SampleBucket

NAME_MAX_LENGTH = 100


def sample_bucket_save(
    *, server: Server, name: str, document: Any, by: User | None, actor_label: str = ""
) -> SampleBucket:
    """Create or replace the server's sample named `name`; the saved bucket.

    Raises BucketError (one sentence) when the name is empty or the document is not a valid bucket
    document; nothing is stored then.
    """
    name = " ".join(name.split())[:NAME_MAX_LENGTH]
    if not name:
        raise BucketError("Give the sample a name.")
    parse_buckets(document)
    user = by if getattr(by, "is_authenticated", False) else None
    with transaction.atomic():
        bucket, created = SampleBucket.objects.update_or_create(
            server=server, name=name, defaults={"document": document, "updated_by": user}
        )
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.SAMPLE_BUCKET_CREATE if created else AuditAction.SAMPLE_BUCKET_UPDATE,
            target=bucket,
            actor_label=actor_label,
        )
    return bucket


def sample_bucket_delete(*, bucket: SampleBucket, by: User | None) -> None:
    """Delete one sample bucket (audited)."""
    with transaction.atomic():
        AuditEvent.record(
            server=bucket.server_id, actor=by, action=AuditAction.SAMPLE_BUCKET_DELETE, target=bucket
        )
        bucket.delete()
