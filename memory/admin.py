"""Shown read-only: memory and consent are written by memory.services, which bump
their cache stamps and audit (servers/admin.py says why)."""

from django.contrib import admin

from servers.admin import ReadOnlyAdmin

from .models import DiscordUser, StmConsent, StmEntry


@admin.register(DiscordUser)
class DiscordUserAdmin(ReadOnlyAdmin):
    list_display = ("id",)
    search_fields = ("id",)


@admin.register(StmConsent)
class StmConsentAdmin(ReadOnlyAdmin):
    list_display = ("user", "server", "created_at")
    raw_id_fields = ("user",)


@admin.register(StmEntry)
class StmEntryAdmin(ReadOnlyAdmin):
    list_display = ("channel", "server", "user", "lineage", "updated_at")
    raw_id_fields = ("channel", "user")
    list_select_related = ("channel", "server", "user")
