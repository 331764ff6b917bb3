"""Names from the server directory the bot pushed, for templates: `{{ id|named:names }}`."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def named(discord_id: Any, names: dict[int, str] | None) -> str:
    """The pushed name for this id, or "" when the bot has not named it."""
    if not names or discord_id in (None, ""):
        return ""
    try:
        return names.get(int(discord_id), "")
    except (TypeError, ValueError):
        return ""
