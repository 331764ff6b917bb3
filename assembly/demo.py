"""Demo data for assembly: the shipped default sample bucket for a server that has none, told in the
demo guild's own names (its bot Lantern, its channels from memory/demo.py), so the preview does not
talk about a #tabletop or a Tomori the demo guild does not have."""

from __future__ import annotations

import json
from typing import Any

from core.actors import DEMO
from servers.models import Server

from . import selectors, services


def populate(server: Server) -> None:
    """Store the default sample bucket document for `server` unless it already keeps a sample."""
    if selectors.sample_buckets_for(server.pk):
        return
    services.sample_bucket_save(
        server=server,
        name=selectors.DEFAULT_SAMPLE_NAME,
        document=demo_document(),
        by=DEMO,
    )


# The shipped sample's names -> the demo guild's (the shipped file itself stays as it is: tests and
# the fidelity harness pin its output).
DEMO_NAMES = (
    (
        "Channels: #general, #tabletop, #art, #mod-log (private)",
        "Channels: #tavern-hall, #quest-board, #officers (private), #cellar",
    ),
    ("no NSFW outside #after-dark", "no NSFW"),
    ("#tabletop", "#quest-board"),
    ("Tomori", "Lantern"),
)


def demo_document() -> dict[str, Any]:
    """The default sample document in the demo guild's names."""
    text = json.dumps(selectors.default_document(), ensure_ascii=False)
    for shipped, demo in DEMO_NAMES:
        text = text.replace(shipped, demo)
    return json.loads(text)
