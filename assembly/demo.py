"""Demo data for assembly: the shipped default sample bucket for a server that has none."""

from __future__ import annotations

from servers.models import Server

from . import selectors, services


def populate(server: Server) -> None:
    """Store the default sample bucket document for `server` unless it already keeps a sample."""
    if selectors.sample_buckets_for(server.pk):
        return
    services.sample_bucket_save(
        server=server,
        name=selectors.DEFAULT_SAMPLE_NAME,
        document=selectors.default_document(),
        by=None,
        actor_label="demo data",
    )
