from django.contrib import admin

from servers.admin import ReadOnlyAdmin

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
class PresetAdmin(ReadOnlyAdmin):
    list_display = ("name", "server", "shape", "is_active", "node_count", "updated_at")
    list_filter = ("is_active", "shape")
    search_fields = ("name", "server__name", "server__id")
    readonly_fields = ("stored_text", "summary", "settings", "node_count", "carried_over", "created_by")
    inlines = [PresetNodeInline]
