"""Writes for servers: API tokens and memberships. Every write leaves an audit entry."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from core.actors import Actor, user_of
from core.errors import UserError

from .api_auth import TOKENS_STAMP
from .audit_actions import AuditAction
from .directory import DirectoryChannel, DirectoryMember
from .models import ApiToken, AuditEvent, Membership, Role, Server, ServerDirectory, token_digest
from .selectors import DIRECTORY_STAMP, TOKENIZER_STAMP
from .users import User
from .writes import server_write


def api_token_create(*, server: Server, name: str, by: Actor) -> tuple[ApiToken, str]:
    """Create a token; returns the row and the plain token, which is never stored and shown only once."""
    plain = ApiToken.generate()
    with server_write(server_id=server.pk, stamps=(TOKENS_STAMP,)):
        token = ApiToken.objects.create(
            server=server,
            name=name.strip()[:100] or "bot",
            digest=token_digest(plain),
            prefix=plain[:10],
            created_by=user_of(by),
        )
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.TOKEN_CREATE,
            target=token,
            detail={"name": token.name},
        )
    return token, plain


def api_token_revoke(*, token: ApiToken, by: Actor) -> None:
    with server_write(server_id=token.server_id, stamps=(TOKENS_STAMP,)):
        updated = ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        if updated:
            AuditEvent.record(
                server=token.server_id,
                actor=by,
                action=AuditAction.TOKEN_REVOKE,
                target=token,
            )


class TokenizerRefused(UserError, ValueError):
    """A tokenizer the server cannot use; `message` is one sentence for the user."""


def server_tokenizer_set(*, server: Server, encoding: str, by: Actor) -> None:
    """Choose the tokenizer the server's token counts use (docs/assembly.md#tokens); TokenizerRefused
    (a ValueError too) for an unknown one."""
    if encoding not in dict(Server._meta.get_field("token_encoding").flatchoices):
        raise TokenizerRefused(f"Unknown tokenizer {encoding!r}: use o200k_base or cl100k_base.")
    before = server.token_encoding
    with server_write(server_id=server.pk, stamps=(TOKENIZER_STAMP,)):
        Server.objects.filter(pk=server.pk).update(token_encoding=encoding)
        server.token_encoding = encoding
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.SERVER_TOKENIZER,
            target=server,
            detail={"before": before, "after": encoding},
        )


def server_ensure(*, server_id: int, name: str | None = None, by: Actor) -> Server:
    """The server with this id, created (named after its id) when it does not exist yet."""
    with transaction.atomic():
        server, created = Server.objects.get_or_create(
            pk=server_id, defaults={"name": name or f"Server {server_id}"}
        )
        if created:
            AuditEvent.record(server=server, action=AuditAction.SERVER_CREATE, target=server, actor=by)
    return server


def membership_set(*, server: Server, user: User, role: Role, by: Actor) -> Membership:
    with transaction.atomic():
        membership, _ = Membership.objects.update_or_create(server=server, user=user, defaults={"role": role})
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.MEMBERSHIP_SET,
            target=membership,
            detail={"user": user.get_username(), "role": role},
        )
    return membership


def membership_remove(*, membership: Membership, by: Actor) -> None:
    """Take a user's role on a server away (roles are read per request: nothing cached to bump)."""
    with transaction.atomic():
        AuditEvent.record(
            server=membership.server,
            actor=by,
            action=AuditAction.MEMBERSHIP_REMOVE,
            target=membership,
            detail={"user": membership.user.get_username(), "role": membership.role},
        )
        Membership.objects.filter(pk=membership.pk).delete()


def directory_replace(
    *, server_id: int, channels: list[DirectoryChannel], members: list[DirectoryMember], by: Actor
) -> ServerDirectory:
    """Store the server's pushed directory in place of the previous one, audited with its counts."""
    with server_write(server_id=server_id, stamps=(DIRECTORY_STAMP,)):
        directory, _ = ServerDirectory.objects.update_or_create(
            server_id=server_id,
            defaults={
                "channels": [
                    {"id": c.id, "name": c.name, "parent": c.parent, "private": c.private} for c in channels
                ],
                "members": [{"id": m.id, "display_name": m.display_name} for m in members],
            },
        )
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.SERVER_DIRECTORY,
            detail={"channels": len(channels), "members": len(members)},
        )
    return directory
