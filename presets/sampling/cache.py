"""The server's sampling choice, cached beside the active preset so an assemble request stays free of SQL.

A `servers.generational_cache` declaration (stamp `sampling`): the choice is kept as plain data (the
default too); during a database outage the day-long stale copy is served, else the default (the
preset's own sampling).
"""

from __future__ import annotations

from typing import Any

from engine.sampling import SamplingChoice
from servers.generational_cache import GenerationalCache

from . import selectors as sampling_selectors


def _load(server_id: int) -> dict[str, Any]:
    return sampling_selectors.sampling_choice(server_id).to_dict()


CHOICE: GenerationalCache[int, dict[str, Any], SamplingChoice] = GenerationalCache(
    name="sampling",
    load=_load,
    compile=SamplingChoice.from_dict,
    outage=SamplingChoice,
    valid=lambda plain: isinstance(plain, dict),
)


def get_sampling_choice(server_id: int) -> SamplingChoice:
    """The server's sampling choice: from the cache when it holds a current one, else the database."""
    return CHOICE.get(server_id)


# What a write bumps (servers.writes.server_write) so that every process reloads the server's
# sampling choice.
STAMP = CHOICE.stamp
