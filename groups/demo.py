"""Demo content: the Lantern Guild's demo cards as one group chat, used by #tavern-hall (called by
`demo_data`, after the cards and the memory demo's channels)."""

from __future__ import annotations

from core.actors import DEMO
from servers.models import Server

from . import selectors, services

DEMO_GROUP = "Lantern Inn"
DEMO_MEMBERS = ("Mira Lampwright", "Tomas Ferry", "Old Tom")
DEMO_CHANNEL = 900000000000000001  # #tavern-hall in the memory demo


def populate(server: Server) -> None:
    """Make the demo group (Old Tom muted) and give it #tavern-hall, unless the server has groups or
    lacks the demo cards."""
    if selectors.group_count(server.pk) or server.cards.filter(name__in=DEMO_MEMBERS).count() < 3:
        return
    group = services.group_save(
        server=server,
        name=DEMO_GROUP,
        members=list(DEMO_MEMBERS),
        muted=["Old Tom"],
        mode="join_include_muted",
        join_prefix="[<FIELDNAME> of {{char}}]\n",
        join_suffix="\n[end]",
        strategy="list",
        by=DEMO,
    )
    services.channel_group_set(server=server, channel_id=DEMO_CHANNEL, group=group, by=DEMO)
