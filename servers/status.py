"""A server at a glance, for its home page: the active preset, how many of each thing it keeps,
and the latest audit events.

Models are named by label ("app.Model") so this floor app imports none of the apps above it; a new
kind of stored thing adds its line to COUNTS.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.urls import NoReverseMatch, reverse

from .models import AuditEvent, Server
from .selectors import audit_for

RECENT_EVENTS = 8


@dataclass(frozen=True, slots=True)
class Count:
    label: str
    model: str  # "app_label.ModelName", with a `server` foreign key
    url_name: str


COUNTS: tuple[Count, ...] = (
    Count("Presets", "presets.Preset", "presets:list"),
    Count("Character cards", "characters.Card", "characters:list"),
    Count("Server regex scripts", "regex_scripts.ServerScript", "regex_scripts:list"),
    Count("Saved samples", "assembly.SampleBucket", "assembly:preview"),
    Count("Sample conversations", "conversations.SampleConversation", "conversations:conversations"),
    Count("Channels with memory", "memory.Channel", "memory:review"),
    Count("Stored memories", "memory.StmEntry", "memory:review"),
)


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
    """What the server's home shows; kinds whose app is not installed are left out."""
    facts = []
    for count in COUNTS:
        try:
            model = apps.get_model(count.model)
            url = reverse(count.url_name, args=[server.pk])
        except (LookupError, NoReverseMatch):
            continue
        facts.append(Fact(label=count.label, value=model.objects.filter(server=server).count(), url=url))
    active = _active_preset(server)
    return ServerStatus(
        active_preset=active[1] if active else None,
        active_preset_url=reverse("presets:detail", args=[server.pk, active[0]]) if active else "",
        facts=tuple(facts),
        recent=tuple(audit_for(server, limit=RECENT_EVENTS)),
    )


def _active_preset(server: Server) -> tuple[int, str] | None:
    try:
        preset = apps.get_model("presets.Preset")
    except LookupError:
        return None
    return preset.objects.filter(server=server, is_active=True).values_list("pk", "name").first()
