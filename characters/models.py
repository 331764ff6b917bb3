"""Character cards a server imported (docs/cards.md); at most one is the server's active character."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

NAME_MAX_LENGTH = 200


class Card(models.Model):
    server = models.ForeignKey("servers.Server", on_delete=models.CASCADE, related_name="cards")
    name = models.CharField(max_length=NAME_MAX_LENGTH)
    spec = models.CharField(max_length=20)
    is_active = models.BooleanField(default=False)
    fields = models.JSONField(help_text="The card as read (engine.cards.Card fields).")
    original = models.TextField(help_text="The card's JSON as uploaded (after lenient decoding).")
    filename = models.CharField(max_length=255, blank=True)
    avatar = models.BinaryField(null=True, blank=True, help_text="The PNG the card came in, if it did.")
    warnings = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["server", "name"], name="card_name_unique_per_server"),
            models.UniqueConstraint(
                fields=["server"], condition=Q(is_active=True), name="one_active_card_per_server"
            ),
        ]

    def __str__(self) -> str:
        return self.name
