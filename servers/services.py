"""Writes for servers: API tokens, memberships, the channels the bot reports and the directory it
pushes. Every write a person or a bot asks for leaves an audit entry."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from core.actors import Actor, user_of
from core.errors import UserError

from .api_auth import TOKENS_STAMP
from .audit_actions import AuditAction
from .directory import DirectoryChannel, DirectoryMember
from .generational_cache import bump, bump_channel
from .models import ApiToken, AuditEvent, Channel, Membership, Role, Server, ServerDirectory, token_digest
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


class ChannelMismatch(UserError, ValueError):
    """A channel the server stored as a DM named as one of its channels, or the other way round."""


def channel_ensure(
    *,
    channel_id: int,
    owner_id: int,
    dm: bool = False,
    parent_id: int | None = None,
    private: bool | None = None,
    name: str = "",
) -> Channel:
    """`owner_id`'s row for Discord channel `channel_id`, created when missing (a DM channel with `dm`);
    a given parent, privacy or name replaces the stored one.

    Each server's channels live in its own namespace, so nothing another server sent can refuse this
    one. Only the server's own records can disagree: a channel it stored as a DM is not one of its
    server channels, and the other way round (ChannelMismatch).
    """
    parent = None
    if parent_id is not None and parent_id != channel_id:
        parent = channel_ensure(channel_id=parent_id, owner_id=owner_id, dm=dm)
    server_id = None if dm else owner_id
    channel, created = Channel.objects.get_or_create(
        owner_id=owner_id,
        discord_id=channel_id,
        defaults={
            "server_id": server_id,
            "parent": parent,
            "is_private": bool(private),
            "name": name[:100],
        },
    )
    if channel.server_id != server_id:
        what = "a direct-message channel" if channel.server_id is None else "a channel of this server"
        raise ChannelMismatch(
            f"Channel {channel_id} is {what} here, not {'a DM' if dm else 'a server channel'}."
        )
    changed = []
    if not created and parent is not None and channel.parent_id != parent.pk:
        channel.parent = parent
        changed.append("parent")
    if not created and private is not None and channel.is_private != private:
        channel.is_private = private
        changed.append("is_private")
    if not created and name and channel.name != name[:100]:
        channel.name = name[:100]
        changed.append("name")
    if changed:
        with transaction.atomic():
            channel.save(update_fields=changed)
            if channel.listed and "name" in changed:
                bump(DIRECTORY_STAMP, owner_id)  # the pages' names of the pushed channels
            if "parent" in changed:
                bump_channel(owner_id, channel_id)  # a stored conversation's row carries its parent
    elif created and parent is not None:
        bump_channel(owner_id, channel_id)
    return channel


def channel_set_private(*, server: Server, channel: Channel, private: bool, by: Actor) -> None:
    """Mark one of the server's channels private or not (its memories stay in it), audited."""
    if channel.server_id != server.pk:
        raise ChannelMismatch(f"Channel {channel.discord_id} is not a channel of this server.")
    with transaction.atomic():
        Channel.objects.filter(pk=channel.pk).update(is_private=private)
        channel.is_private = private
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.STM_CHANNEL_PRIVATE if private else AuditAction.STM_CHANNEL_PUBLIC,
            target=channel,
            detail={"channel": channel.discord_id, "private": private},
        )


def directory_replace(
    *, server_id: int, channels: list[DirectoryChannel], members: list[DirectoryMember], by: Actor
) -> list[int]:
    """Store the server's pushed directory in place of the previous one, audited with its counts:
    the members, and each channel's name, parent and private flag on its channel row, so the privacy
    rules read the pushed flag (docs/memory.md). The rows are this server's own (another server's rows
    for the same id are other records); a channel this server stored as a DM is skipped, and the
    skipped ids are returned."""
    skipped: list[int] = []
    with server_write(server_id=server_id, stamps=(DIRECTORY_STAMP,)):
        ServerDirectory.objects.update_or_create(
            server_id=server_id,
            defaults={"members": [{"id": m.id, "display_name": m.display_name} for m in members]},
        )
        listed = []
        for pushed in channels:
            try:
                row = channel_ensure(
                    channel_id=pushed.id,
                    owner_id=server_id,
                    parent_id=pushed.parent,
                    private=pushed.private,
                    name=pushed.name,
                )
            except ChannelMismatch:
                skipped.append(pushed.id)
            else:
                listed.append(row.pk)
        Channel.objects.filter(owner_id=server_id, listed=True).exclude(pk__in=listed).update(listed=False)
        Channel.objects.filter(pk__in=listed, listed=False).update(listed=True)
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.SERVER_DIRECTORY,
            detail={"channels": len(channels), "members": len(members)},
        )
    return skipped
