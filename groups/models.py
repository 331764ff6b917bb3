"""Group chats (docs/groups.md): a server's named groups of its character cards, the channels that
use a group instead of the server's character, and the members' private notes per channel."""

from __future__ import annotations

from django.conf import settings
from django.db import models

NAME_MAX_LENGTH = 100
JOIN_TEXT_MAX_LENGTH = 2_000
NOTE_MAX_LENGTH = 1_500
AUTHORS_NOTE_MAX_LENGTH = 1_500

MODE_CHOICES = [
    ("swap", "Swap character cards"),
    ("join_exclude_muted", "Join character cards (exclude muted)"),
    ("join_include_muted", "Join character cards (include muted)"),
]
STRATEGY_CHOICES = [
    ("natural", "Natural order"),
    ("list", "List order"),
    ("pooled", "Pooled order"),
    ("manual", "Manual"),
]


class Group(models.Model):
    server = models.ForeignKey("servers.Server", on_delete=models.CASCADE, related_name="groups")
    name = models.CharField(max_length=NAME_MAX_LENGTH)
    mode = models.CharField(max_length=24, choices=MODE_CHOICES, default="swap")
    join_prefix = models.TextField(blank=True, default="")
    join_suffix = models.TextField(blank=True, default="")
    strategy = models.CharField(max_length=12, choices=STRATEGY_CHOICES, default="natural")
    allow_self_responses = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["server", "name"], name="group_name_unique_per_server")
        ]

    def __str__(self) -> str:
        return self.name


class GroupMember(models.Model):
    """A card's place in a group. Deleting the card removes it from the group (as SillyTavern drops
    a deleted character from its groups); the others keep their order."""

    group = models.ForeignKey(Group, on_delete=models.CASCADE, related_name="memberships")
    card = models.ForeignKey("characters.Card", on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField()
    muted = models.BooleanField(default=False)

    class Meta:
        ordering = ["group", "position"]
        constraints = [
            models.UniqueConstraint(fields=["group", "card"], name="group_member_once"),
            models.UniqueConstraint(fields=["group", "position"], name="group_member_position_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.group} #{self.position}"


class ChannelGroup(models.Model):
    """A channel (or thread) that uses a group instead of the server's character."""

    server = models.ForeignKey("servers.Server", on_delete=models.CASCADE, related_name="+")
    channel_id = models.BigIntegerField()
    group = models.ForeignKey(Group, on_delete=models.CASCADE, related_name="channels")
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["server", "channel_id"], name="one_group_per_channel")]

    def __str__(self) -> str:
        return f"channel {self.channel_id} → {self.group_id}"


class MemberNote(models.Model):
    """A member's private note in one channel (the set_member_note tool), put into that member's
    prompt as its scenario when it speaks there."""

    server = models.ForeignKey("servers.Server", on_delete=models.CASCADE, related_name="+")
    channel_id = models.BigIntegerField()
    card = models.ForeignKey("characters.Card", on_delete=models.CASCADE, related_name="+")
    text = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["server", "channel_id", "card"], name="one_note_per_member_channel"
            )
        ]

    def __str__(self) -> str:
        return f"note of {self.card_id} in {self.channel_id}"


class ChannelAuthorsNote(models.Model):
    """A channel's Author's Note, written by the set_author_note tool or on the Groups page; every
    prompt assembled for that channel receives it where the document's note settings place it."""

    server = models.ForeignKey("servers.Server", on_delete=models.CASCADE, related_name="+")
    channel_id = models.BigIntegerField()
    text = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["server", "channel_id"], name="one_authors_note_per_channel")
        ]

    def __str__(self) -> str:
        return f"Author's Note in {self.channel_id}"
