"""Short-term memory storage: users, their consent per server and the per-channel entries the
contributor reads (docs/memory.md). The channels themselves (privacy, thread parents, names) are
servers' `Channel` rows. Discord ids are 64-bit snowflakes."""

from __future__ import annotations

from django.db import models
from django.db.models.functions import Length
from django.db.models.lookups import LessThanOrEqual

from servers.models import Channel, Server

SUMMARY_MAX_CHARS = 1500
MAX_MESSAGES = 10


class DiscordUser(models.Model):
    """A Discord user some server's bot has talked to (a Discord id is global). The user's display
    name is per server (`DiscordUserName`): one server's bot cannot rename the user on another's pages."""

    id = models.BigIntegerField(primary_key=True)

    def __str__(self) -> str:
        return f"user {self.id}"


class DiscordUserName(models.Model):
    """The display name `server`'s bot reported for a user."""

    user = models.ForeignKey(DiscordUser, on_delete=models.CASCADE, related_name="names")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="stm_user_names")
    name = models.CharField(max_length=100)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "server"], name="one_stm_user_name_per_server")
        ]

    def __str__(self) -> str:
        return self.name


class StmConsent(models.Model):
    """The user's consent, relayed by `server`'s own bot, that `server`'s memories of them may surface
    in their other servers and DMs. It opens nothing of any other server's (docs/memory.md)."""

    user = models.ForeignKey(DiscordUser, on_delete=models.CASCADE, related_name="stm_consents")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="stm_consents")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "cross-server memory consent"
        ordering = ["user_id", "server_id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "server"], name="one_stm_consent_per_user_and_server")
        ]

    def __str__(self) -> str:
        return f"{self.user} consents for server {self.server_id}"


class StmEntry(models.Model):
    """The recent conversation of one channel in one persona lineage (server memories are shared:
    `user` is whoever spoke last). `owner` is the server whose bot stored it, DM entries included:
    no other server's token reads or writes it. `server` is the owner, or None for a DM entry."""

    owner = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="stm_owned_entries")
    server = models.ForeignKey(
        Server, null=True, blank=True, on_delete=models.CASCADE, related_name="stm_entries"
    )
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="stm_entries")
    user = models.ForeignKey(DiscordUser, on_delete=models.CASCADE, related_name="stm_entries")
    lineage = models.CharField(max_length=100, blank=True, default="")
    messages = models.JSONField(default=list, blank=True)
    summary = models.TextField(blank=True, default="")
    updated_at = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name = "short-term memory entry"
        verbose_name_plural = "short-term memory entries"
        ordering = ["-updated_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["channel", "lineage"], name="one_stm_entry_per_channel_and_lineage"
            ),
            models.CheckConstraint(
                condition=LessThanOrEqual(Length("summary"), SUMMARY_MAX_CHARS),
                name="stm_summary_at_most_1500_chars",
            ),
        ]
        indexes = [
            models.Index(fields=["server", "lineage"], name="stm_server_lineage"),
            models.Index(fields=["user", "lineage"], name="stm_user_lineage"),
            models.Index(fields=["owner", "lineage"], name="stm_owner_lineage"),
        ]

    def __str__(self) -> str:
        return f"memory of {self.channel} ({self.lineage or 'default lineage'})"
