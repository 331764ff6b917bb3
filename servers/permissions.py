"""Who may do what on a server: the role table of docs/presets.md#who-may-do-what, in one place.

Every rule has two spellings: `user_can` (a boolean, for templates) and `check_user_can` (raises,
for views). `get_server_for` is the getter views use: 404 to non-members, 403 to members whose role
lacks the action.
"""

from __future__ import annotations

from enum import StrEnum

from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, Subquery
from django.http import Http404

from core.fairness import claim_share

from .models import Membership, Role, Server
from .users import User


class Action(StrEnum):
    READ_SERVER = "read_server"  # the server's home page
    READ_PRESETS = "read_presets"  # presets, nodes, import summaries
    MANAGE_PRESETS = "manage_presets"  # upload, replace, (de)activate, rename, delete, toggle, style, download, channel presets
    READ_CARDS = "read_cards"  # character cards, their avatars and downloads
    MANAGE_CARDS = "manage_cards"  # upload, replace, (de)activate, delete
    READ_LOREBOOKS = "read_lorebooks"  # lorebooks and their entries
    MANAGE_LOREBOOKS = (
        "manage_lorebooks"  # upload, replace, (de)activate, delete, download, entries, settings
    )
    READ_REGEX = "read_regex"  # the server's regex scripts and a preset's own
    MANAGE_REGEX = (
        "manage_regex"  # import, add, edit, toggle, move, delete; a preset's own switched on or off
    )
    READ_GROUPS = "read_groups"  # groups and their members
    MANAGE_GROUPS = "manage_groups"  # create, edit, delete, the group of a channel
    READ_SAMPLING = "read_sampling"  # the sampling panel
    MANAGE_SAMPLING = (
        "manage_sampling"  # the server's sampling choice (mode, provider, own values), tokenizer
    )
    READ_AUDIT = "read_audit"
    MANAGE_TOKENS = "manage_tokens"
    REVIEW_STM = "review_stm"  # short-term memory and the stored channel conversations (read)
    FORGET_CHANNELS = "forget_channels"  # forget a stored channel conversation or a member's messages
    MANAGE_PRIVACY = "manage_privacy"  # private channels, privacy bypass
    MANAGE_CROSS_SERVER_MEMORY = "manage_cross_server_memory"  # whether other servers' memories come in
    SEE_OPT_IN = "see_opt_in"  # a user's cross-server opt-in, for support cases
    VIEW_PREVIEW = "view_preview"  # preview, sample buckets and conversations (read)
    EDIT_SAMPLES = "edit_samples"  # sample buckets and sample conversations (edit)


_ALL = frozenset(Role)
_ADMIN = frozenset({Role.ADMIN})
ROLE_TABLE: dict[Action, frozenset[Role]] = {
    Action.READ_SERVER: _ALL,
    Action.READ_PRESETS: _ALL,
    Action.MANAGE_PRESETS: _ADMIN,
    Action.READ_CARDS: _ALL,
    Action.MANAGE_CARDS: _ADMIN,
    Action.READ_LOREBOOKS: _ALL,
    Action.MANAGE_LOREBOOKS: _ADMIN,
    Action.READ_REGEX: _ALL,
    Action.MANAGE_REGEX: _ADMIN,
    Action.READ_GROUPS: _ALL,
    Action.MANAGE_GROUPS: _ADMIN,
    Action.READ_SAMPLING: _ALL,
    Action.MANAGE_SAMPLING: _ADMIN,
    Action.READ_AUDIT: _ALL,
    Action.MANAGE_TOKENS: _ADMIN,
    Action.REVIEW_STM: _ALL,
    Action.FORGET_CHANNELS: _ALL,
    Action.MANAGE_PRIVACY: frozenset({Role.ADMIN, Role.MODERATOR}),
    Action.MANAGE_CROSS_SERVER_MEMORY: _ADMIN,
    Action.SEE_OPT_IN: _ALL,
    Action.VIEW_PREVIEW: _ALL,
    Action.EDIT_SAMPLES: frozenset({Role.ADMIN, Role.SUPPORT}),
}


def _roles_to_read(user: User | AnonymousUser, server_id: int) -> tuple[int, dict[int, Role | None]] | None:
    """The request user's id and noted roles when their role on `server_id` is still to be read;
    None for an anonymous user, a superuser (no role needed) or a role already noted."""
    if isinstance(user, AnonymousUser) or not getattr(user, "is_authenticated", False):
        return None
    if getattr(user, "is_superuser", False) or user.pk is None:
        return None
    roles: dict[int, Role | None] = user.__dict__.setdefault("_tk_roles", {})
    return None if server_id in roles else (user.pk, roles)


def role_of(user: User | AnonymousUser, server: Server | int) -> Role | None:
    """The user's role on the server, or None when they are not a member. Cached per request user."""
    if isinstance(user, AnonymousUser) or not getattr(user, "is_authenticated", False):
        return None
    server_id = server.pk if isinstance(server, Server) else server
    roles: dict[int, Role | None] = user.__dict__.setdefault("_tk_roles", {})
    if server_id not in roles:
        row = Membership.objects.filter(user=user, server_id=server_id).values_list("role", flat=True).first()
        roles[server_id] = Role(row) if row else None
    return roles[server_id]


def is_member(user: User | AnonymousUser, server: Server | int) -> bool:
    return bool(getattr(user, "is_superuser", False)) or role_of(user, server) is not None


def user_can(user: User | AnonymousUser, server: Server | int, action: Action) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_superuser:
        return True
    role = role_of(user, server)
    return role is not None and role in ROLE_TABLE[action]


def check_user_can(user: User | AnonymousUser, server: Server | int, action: Action) -> None:
    """Raise Http404 for a non-member (no hint the server exists) and PermissionDenied for a missing role."""
    if not is_member(user, server):
        raise Http404("No such server.")
    if not user_can(user, server, action):
        raise PermissionDenied("Your role on this server does not allow that.")


def get_server_for(user: User | AnonymousUser, server_id: int, *, needs: Action) -> Server:
    """The server, once the user is known to be allowed `needs` on it (404 / 403 otherwise).

    The server and the user's role on it are read in one query (the role as `role_of` reads it,
    noted for the rest of the request); the check is `check_user_can`'s, as for any other caller."""
    rows = Server.objects.filter(pk=server_id)
    to_read = _roles_to_read(user, server_id)
    if to_read is not None:
        membership = Membership.objects.filter(user_id=to_read[0], server_id=OuterRef("pk")).order_by("pk")
        rows = rows.annotate(_tk_role=Subquery(membership.values("role")[:1]))
    server = rows.first()
    if server is None:
        raise Http404("No such server.")
    if to_read is not None:
        role = server.__dict__.pop("_tk_role")
        to_read[1][server.pk] = Role(role) if role else None
    check_user_can(user, server, needs)
    claim_share(server.pk)  # the request now counts toward this server's share (core/fairness.py)
    return server


def servers_for(user: User | AnonymousUser) -> list[Server]:
    if getattr(user, "is_superuser", False):
        return list(Server.objects.all())
    if isinstance(user, AnonymousUser):
        return []
    return list(Server.objects.filter(memberships__user=user).order_by("name", "id"))
