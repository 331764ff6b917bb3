"""Django admin: a window for superusers, never a way around the services (docs/architecture.md).

Its saves write rows directly, so a change made there would bump no cache stamp and leave no audit
event (a token revoked there stayed valid for up to ten minutes). Every model is therefore shown
read-only (`ReadOnlyAdmin`), except the two things a superuser does here to let a guild in, which
go through the services: adding a server (`server_ensure`) and giving, changing or taking away a
membership (`membership_set`, `membership_remove`), each audited under the superuser's name.
"""

from __future__ import annotations

from typing import Any, cast

from django.contrib import admin
from django.contrib.admin.options import InlineModelAdmin
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from . import services
from .models import ApiToken, AuditEvent, Channel, Membership, Role, Server
from .users import User


def _superuser(request: HttpRequest) -> User:
    """The signed-in staff member (the admin site lets no one else in)."""
    return cast(User, request.user)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Shows rows; adds, changes and deletes nothing (the services write, with stamps and audit)."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    fields = ("user", "role")
    readonly_fields = fields
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Server)
class ServerAdmin(ReadOnlyAdmin):
    list_display = ("id", "name", "stm_privacy_bypass")
    search_fields = ("id", "name")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    fields = ("id", "name")

    def get_inlines(self, request: HttpRequest, obj: Server | None) -> list[type[InlineModelAdmin[Any, Any]]]:
        return [MembershipInline] if obj is not None else []  # a new server has no members yet

    def save_model(self, request: HttpRequest, obj: Server, form: ModelForm, change: bool) -> None:
        saved = services.server_ensure(server_id=obj.pk, name=obj.name, by=_superuser(request))
        obj.__dict__.update(saved.__dict__)


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "server", "role")
    list_filter = ("role",)

    def get_readonly_fields(self, request: HttpRequest, obj: Membership | None = None) -> tuple[str, ...]:
        return ("user", "server") if obj is not None else ()

    def save_model(self, request: HttpRequest, obj: Membership, form: ModelForm, change: bool) -> None:
        saved = services.membership_set(
            server=obj.server, user=obj.user, role=Role(obj.role), by=_superuser(request)
        )
        obj.pk = saved.pk

    def delete_model(self, request: HttpRequest, obj: Membership) -> None:
        services.membership_remove(membership=obj, by=_superuser(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Membership]) -> None:
        for membership in queryset.select_related("server", "user"):
            services.membership_remove(membership=membership, by=_superuser(request))


@admin.register(ApiToken)
class ApiTokenAdmin(ReadOnlyAdmin):
    """Tokens are made and revoked on the server's Tokens page or with `manage.py token`."""

    list_display = ("name", "server", "prefix", "created_at", "revoked_at")
    exclude = ("digest",)


@admin.register(Channel)
class ChannelAdmin(ReadOnlyAdmin):
    """Channels are written by the bot's turns and directory pushes, privacy on the memory page."""

    list_display = ("discord_id", "name", "owner", "server", "parent", "is_private", "listed")
    list_filter = ("is_private", "listed")
    search_fields = ("discord_id", "name")
    raw_id_fields = ("parent",)


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "server", "actor_label", "action", "target_label")
    list_filter = ("action",)
