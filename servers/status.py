"""A server at a glance, for its home page: the active preset, how many of each thing it keeps,
and the latest audit events.

This floor app names none of the apps above it: each app adds its own lines from its
`AppConfig.ready()` (`HOME_COUNTS`, `ACTIVE`; docs/architecture.md, "Layers"). An app that is not
installed adds nothing, so its line is not shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Model
from django.urls import NoReverseMatch, reverse

from core.hooks import Hook

from .models import AuditEvent, Server
from .selectors import audit_for

RECENT_EVENTS = 8


@dataclass(frozen=True, slots=True)
class Count:
    label: str
    model: type[Model]  # the app's own model, with a `server` foreign key
    url_name: str


@dataclass(frozen=True, slots=True)
class Active:
    """The one thing of its kind a server uses (its active preset): `find(server_id)` gives its
    (pk, name) or None; its page is `url_name` with (server id, pk)."""

    find: Callable[[int], tuple[int, str] | None]
    url_name: str


# Orders, so the page reads as it always has: presets 10, cards 20, regex scripts 30, samples 40,
# conversations 50, memory 60 and 70.
HOME_COUNTS: Hook[Count] = Hook("the home page's counts")
ACTIVE: Hook[Active] = Hook("what the home page calls active")


@dataclass(frozen=True, slots=True)
class Fact:
    label: str
    value: int
    url: str


@dataclass(frozen=True, slots=True)
class ServerStatus:
    active_preset: str | None
    active_preset_url: str
    facts: tuple[Fact, ...]
    recent: tuple[AuditEvent, ...]


def server_status(server: Server) -> ServerStatus:
    """What the server's home shows."""
    facts = []
    for count in HOME_COUNTS:
        try:
            url = reverse(count.url_name, args=[server.pk])
        except NoReverseMatch:
            continue
        facts.append(
            Fact(label=count.label, value=count.model._default_manager.filter(server=server).count(), url=url)
        )
    active = _active(server)
    return ServerStatus(
        active_preset=active[1] if active else None,
        active_preset_url=active[0] if active else "",
        facts=tuple(facts),
        recent=tuple(audit_for(server, limit=RECENT_EVENTS)),
    )


def _active(server: Server) -> tuple[str, str] | None:
    """(url, name) of the first active thing an app reports."""
    for active in ACTIVE:
        found = active.find(server.pk)
        if found:
            return reverse(active.url_name, args=[server.pk, found[0]]), found[1]
    return None
