from django.contrib import admin
from django.http import HttpRequest

from .models import Preset, PresetNode


class PresetNodeInline(admin.TabularInline):
    model = PresetNode
    fields = (
        "position",
        "identifier",
        "name",
        "kind",
        "role",
        "enabled",
        "injection_position",
        "injection_depth",
    )
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False


@admin.register(Preset)
class PresetAdmin(admin.ModelAdmin):
    list_display = ("name", "server", "shape", "is_active", "node_count", "updated_at")
    list_filter = ("is_active", "shape")
    search_fields = ("name", "server__name", "server__id")
    readonly_fields = ("stored_text", "summary", "settings", "node_count", "carried_over", "created_by")
    inlines = [PresetNodeInline]

    # Writes go through presets.services (audit entry + cache invalidation); the admin only reads.
    def has_add_permission(self, request: HttpRequest, obj: Preset | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Preset | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Preset | None = None) -> bool:
        return False
