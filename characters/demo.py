"""Demo content: three hand-written character cards for the Lantern Guild (called by `demo_data`).
None is the server's active card, so the bot stays "Lantern" in its solo channels as the memory
demo has it; the groups demo puts the three in #tavern-hall's group."""

from __future__ import annotations

from pathlib import Path

from core.actors import DEMO
from servers.models import Server

from . import services

DEMO_DIR = Path(__file__).resolve().parent / "demo_data"
DEMO_CARDS = ("mira-lampwright.json", "tomas-ferry.json", "old-tom.json")


def populate(server: Server) -> None:
    """Import the demo cards for `server`, unless it already has cards."""
    if server.cards.exists():
        return
    for filename in DEMO_CARDS:
        path = DEMO_DIR / filename
        services.card_import(
            server=server, raw=path.read_bytes(), filename=path.name, activate=False, by=DEMO
        )
