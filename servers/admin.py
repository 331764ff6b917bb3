from django.contrib import admin

from .models import ApiToken, AuditEvent, Membership, Server


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1


@admin.register(Server)
class ServerAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "stm_privacy_bypass")
    search_fields = ("id", "name")
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "server", "role")
    list_filter = ("role",)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "server", "prefix", "created_at", "revoked_at")
    readonly_fields = ("digest", "prefix")


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "server", "actor_label", "action", "target_label")
    list_filter = ("action",)
