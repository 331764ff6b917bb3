"""`{% server_links as links %}`: the server pages the signed-in user may open (servers.navigation)."""

from __future__ import annotations

from typing import Any

from django import template

from servers.navigation import NavLink
from servers.navigation import server_links as links_for
from servers.permissions import Action, user_can

register = template.Library()


@register.simple_tag(takes_context=True)
def server_links(context: Any) -> list[NavLink]:
    server, request = context.get("server"), context.get("request")
    if server is None or request is None or not hasattr(server, "pk"):
        return []
    return links_for(request.user, server, request.path)


@register.simple_tag(takes_context=True)
def can(context: Any, action: str) -> bool:
    """True when the signed-in user may do `action` (an Action value) on the page's server."""
    server, request = context.get("server"), context.get("request")
    if server is None or request is None or not hasattr(server, "pk"):
        return False
    return user_can(request.user, server, Action(action))
