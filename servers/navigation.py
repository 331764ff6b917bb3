"""The server navigation: one line per page, shown to the roles that may open it.

URL names are strings so this floor app imports none of the apps whose pages it links; a new page
adds its line here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.urls import NoReverseMatch, reverse

from .permissions import Action, user_can
from .users import User


@dataclass(frozen=True, slots=True)
class NavItem:
    label: str
    url_name: str
    needs: Action


@dataclass(frozen=True, slots=True)
class NavLink:
    label: str
    url: str
    current: bool


SERVER_NAV: tuple[NavItem, ...] = (
    NavItem("Presets", "presets:list", Action.READ_PRESETS),
    NavItem("Sampling", "presets:sampling", Action.READ_SAMPLING),
    NavItem("Characters", "characters:list", Action.READ_CARDS),
    NavItem("Groups", "groups:list", Action.READ_GROUPS),
    NavItem("Regex", "regex_scripts:list", Action.READ_REGEX),
    NavItem("Lorebooks", "lorebooks:list", Action.READ_LOREBOOKS),
    NavItem("Preview", "assembly:preview", Action.VIEW_PREVIEW),
    NavItem("Conversations", "conversations:conversations", Action.VIEW_PREVIEW),
    NavItem("Memory", "memory:review", Action.REVIEW_STM),
    NavItem("Channels", "conversations:channels", Action.REVIEW_STM),
    NavItem("Audit", "servers:audit", Action.READ_AUDIT),
    NavItem("API tokens", "servers:tokens", Action.MANAGE_TOKENS),
)


def server_links(user: User | AnonymousUser, server: Any, path: str) -> list[NavLink]:
    """The server's pages this user may open, the one `path` is on marked current."""
    links = []
    for item in SERVER_NAV:
        if not user_can(user, server, item.needs):
            continue
        try:
            url = reverse(item.url_name, args=[server.pk])
        except NoReverseMatch:  # a page whose app is not installed
            continue
        links.append(NavLink(label=item.label, url=url, current=path.startswith(url)))
    return links
