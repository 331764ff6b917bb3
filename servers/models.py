"""Servers (Discord guilds), who belongs to them in which role, API tokens and the audit trail."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.conf import settings
from django.db import models

from core.actors import Actor, label_of, user_of

from .audit_actions import AuditAction


class Role(models.TextChoices):
    ADMIN = "admin", "Admin"
    MODERATOR = "moderator", "Moderator"
    SUPPORT = "support", "Support"


class Server(models.Model):
    id = models.BigIntegerField(primary_key=True, help_text="The Discord guild id (a snowflake).")
    name = models.CharField(max_length=100)
    stm_privacy_bypass = models.BooleanField(
        default=False, help_text="Let memories of private channels surface in every channel of this server."
    )
    stm_receive_other_servers = models.BooleanField(
        default=False,
        help_text="Let other servers' memories of a user (with that user's consent there) surface here.",
    )
    # The tokenizer the token counts use (docs/assembly.md#tokens); the provider is the sampling choice's.
    token_encoding = models.CharField(
        max_length=16,
        choices=[("o200k_base", "o200k_base"), ("cl100k_base", "cl100k_base")],
        default="o200k_base",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "server"], name="one_membership_per_user_and_server")
        ]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} of {self.server}"


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ApiToken(models.Model):
    """A bearer token for the bot. Only its SHA-256 digest is stored; the token is shown once."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12, help_text="The first characters, to tell tokens apart.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @staticmethod
    def generate() -> str:
        return "tk_" + secrets.token_urlsafe(32)

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class AuditEvent(models.Model):
    """Who did what, when, on which server. Written by every service that changes state."""

    server = models.ForeignKey(
        Server, null=True, blank=True, on_delete=models.CASCADE, related_name="audit_events"
    )
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    actor_label = models.CharField(
        max_length=150, blank=True, help_text="'api token …', 'cli', or the username."
    )
    action = models.CharField(max_length=64, choices=AuditAction.choices)
    target_type = models.CharField(max_length=64, blank=True)
    target_id = models.CharField(max_length=64, blank=True)
    target_label = models.CharField(max_length=200, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["server", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.actor_label} {self.action} {self.target_label}".strip()

    @classmethod
    def record(
        cls,
        *,
        server: Server | int | None,
        actor: Actor,
        action: AuditAction,
        target: models.Model | None = None,
        detail: dict[str, Any] | None = None,
    ) -> AuditEvent:
        """Store one audit entry: the user behind `actor` (none for an agent) and the label naming it."""
        action = AuditAction(action)  # a code that is not a member is refused (ValueError), never stored
        server_id = server.pk if isinstance(server, Server) else server
        return cls.objects.create(
            server_id=server_id,
            actor=user_of(actor),
            actor_label=label_of(actor),
            action=action,
            target_type=target._meta.model_name if target is not None else "",
            target_id=str(target.pk) if target is not None else "",
            target_label=str(target)[:200] if target is not None else "",
            detail=detail or {},
        )


class Channel(models.Model):
    """A Discord channel or thread as one server's bot reported it: the one record of its name,
    parent and privacy (docs/memory.md). Every other app names a channel by its Discord id and reads
    these facts through servers.selectors.

    `owner` is the server whose bot reported it: each server's channels live in its own namespace,
    so the same Discord id under two servers is two rows and nothing one server sends can claim a
    channel for another. `server` is the owner, or None for a direct-message channel. `listed`
    marks the channels of the bot's latest directory push (a channel deleted in Discord leaves the
    pickers on the next push)."""

    id = models.BigAutoField(primary_key=True)
    discord_id = models.BigIntegerField()
    owner = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="owned_channels")
    server = models.ForeignKey(
        Server, null=True, blank=True, on_delete=models.CASCADE, related_name="channels"
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="threads"
    )
    name = models.CharField(max_length=100, blank=True)
    is_private = models.BooleanField(default=False)
    listed = models.BooleanField(default=False, help_text="In the bot's latest directory push.")

    class Meta:
        ordering = ["owner_id", "name", "discord_id"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "discord_id"], name="one_channel_per_owner_and_id")
        ]

    def __str__(self) -> str:
        return f"#{self.name}" if self.name else f"channel {self.discord_id}"

    @property
    def is_dm(self) -> bool:
        return self.server_id is None


class ServerDirectory(models.Model):
    """The member names the bot pushed for a server, so the pages show names instead of raw Discord
    ids; the channels of the same push are `Channel` rows marked `listed`. Replaced whole on every
    push; bounded by `servers.directory`."""

    server = models.OneToOneField(
        Server, primary_key=True, on_delete=models.CASCADE, related_name="directory"
    )
    # [{"id": int, "display_name": str}]
    members = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"directory of {self.server_id}"


class CacheStamp(models.Model):
    """The database's own generation of one cached idea of a server (servers.generational_cache).

    Bumped inside the transaction of every write that changes what the cache holds, so the number
    moves exactly when the change commits; the shared cache keeps a copy, and each process checks the
    copy against this row at most every CACHE_STAMP_CHECK_SECONDS. A Redis restored from an old
    snapshot holds a smaller number than this row, which is how it is caught.
    """

    # A plain number, not a foreign key: a request may name a server that does not exist (yet).
    server_id = models.BigIntegerField()
    name = models.CharField(max_length=32)
    generation = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["server_id", "name"], name="cachestamp_server_name")]

    def __str__(self) -> str:
        return f"{self.name} of {self.server_id}: {self.generation}"


class AccountSession(models.Model):
    """A dashboard session of an account, kept so that an account holds at most
    SESSIONS_PER_ACCOUNT of them (servers/sessions.py): signing in again and again does not multiply
    a browser's share of a web process."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    session_key = models.CharField(max_length=40, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user_id", "created_at", "id"]

    def __str__(self) -> str:
        return f"session of {self.user_id} since {self.created_at:%Y-%m-%d %H:%M}"
