"""Demo content: the Lantern Guild gets a small, hand-written Prompt Manager preset (called by `demo_data`)."""

from __future__ import annotations

from pathlib import Path

from core.actors import DEMO
from servers.models import Server

from . import services

DEMO_FILE = Path(__file__).resolve().parent / "demo_data" / "lantern-house-style.json"
DEMO_NAME = "Lantern House Style"


def populate(server: Server) -> None:
    """Import the demo preset for `server` and make it active, unless the server already has presets."""
    if server.presets.exists():
        return
    services.preset_import(
        server=server,
        raw=DEMO_FILE.read_bytes(),
        filename=DEMO_FILE.name,
        name=DEMO_NAME,
        activate=True,
        by=DEMO,
    )
