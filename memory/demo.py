"""Demo content: a few channels and memories for the Lantern Guild (called by `demo_data`)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from core.actors import DEMO
from servers import services as server_services
from servers.directory import DirectoryChannel, DirectoryMember
from servers.models import Server

from . import services
from .models import StmEntry

DEMO_USER = 300000000000000001
OTHER_USER = 300000000000000002
_CHANNELS = [
    # (channel id, name, parent, private)
    (900000000000000001, "tavern-hall", None, False),
    (900000000000000002, "quest-board", None, False),
    (900000000000000003, "officers", None, True),
    (900000000000000004, "dragon-hunt", 900000000000000002, False),
    (900000000000000005, "cellar", None, False),
]


def _turn(user: str, text: str, reply: str) -> list[dict[str, str]]:
    return [
        {"role": "user", "name": user, "content": text},
        {"role": "assistant", "name": "Lantern", "content": reply},
    ]


def populate(server: Server) -> None:
    """Store demo channels and entries for `server`, unless it already has memories."""
    if StmEntry.objects.filter(owner=server).exists():
        return
    now = timezone.now()
    services.user_ensure(user_id=DEMO_USER, server_id=server.pk, name="Mira")
    services.user_ensure(user_id=OTHER_USER, server_id=server.pk, name="Tomas")
    # The bot's directory, as a bot pushes it on joining: the pages show these names, not ids.
    server_services.directory_replace(
        server_id=server.pk,
        channels=[DirectoryChannel(id=c, name=n, parent=p, private=priv) for c, n, p, priv in _CHANNELS],
        members=[
            DirectoryMember(id=DEMO_USER, display_name="Mira"),
            DirectoryMember(id=OTHER_USER, display_name="Tomas"),
        ],
        by=DEMO,
    )
    entries = [
        (
            900000000000000001,
            DEMO_USER,
            "Mira asked for the house ale and a rumour about the old mill.",
            [],
            1,
        ),
        (
            900000000000000002,
            OTHER_USER,
            "",
            _turn("Tomas", "Any work for a sellsword?", "The dragon hunt needs a third blade."),
            3,
        ),
        (900000000000000003, OTHER_USER, "The officers planned the guild's winter budget.", [], 2),
        (
            900000000000000004,
            DEMO_USER,
            "",
            _turn("Mira", "Which road to the lair?", "Take the north pass before the snow."),
            5,
        ),
        (900000000000000005, DEMO_USER, "An old argument about who broke the cellar lock.", [], 30),
    ]
    for channel_id, user_id, summary, messages, hours_ago in entries:
        services.stm_put_entry(
            server_id=server.pk,
            channel_id=channel_id,
            user_id=user_id,
            summary=summary,
            messages=messages,
            updated_at=now - timedelta(hours=hours_ago),
        )
