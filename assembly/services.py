"""Writes for assembly: the server's sample bucket documents (validated, audited)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from core.actors import Actor, user_of
from engine import BucketError, parse_buckets
from servers.audit_actions import AuditAction
from servers.models import AuditEvent, Server

from .bucket_models import SampleBucket

NAME_MAX_LENGTH = 100


def sample_bucket_save(*, server: Server, name: str, document: Any, by: Actor) -> SampleBucket:
    """Create or replace the server's sample named `name`; the saved bucket.

    Raises BucketError (one sentence) when the name is empty or the document is not a valid bucket
    document; nothing is stored then.
    """
    name = " ".join(name.split())[:NAME_MAX_LENGTH]
    if not name:
        raise BucketError("Give the sample a name.")
    parse_buckets(document)
    user = user_of(by)
    with transaction.atomic():
        bucket, created = SampleBucket.objects.update_or_create(
            server=server, name=name, defaults={"document": document, "updated_by": user}
        )
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.SAMPLE_BUCKET_CREATE if created else AuditAction.SAMPLE_BUCKET_UPDATE,
            target=bucket,
        )
    return bucket


def sample_bucket_delete(*, bucket: SampleBucket, by: Actor) -> None:
    """Delete one sample bucket (audited)."""
    with transaction.atomic():
        AuditEvent.record(
            server=bucket.server_id, actor=by, action=AuditAction.SAMPLE_BUCKET_DELETE, target=bucket
        )
        bucket.delete()
