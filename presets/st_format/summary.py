"""Counting and describing a preset's nodes (SPEC §1.6)."""

from __future__ import annotations

from collections.abc import Sequence

from presets.st_format.model import ImportSummary, PresetNode


def summarize(nodes: Sequence[PresetNode], *, shape: str, not_in_order: int = 0) -> ImportSummary:
    """The summary counts for `nodes` (placeholder until the parser lands)."""
    return ImportSummary(
        shape=shape,
        nodes=len(nodes),
        markers=sum(n.kind == "marker" for n in nodes),
        content=sum(n.kind == "content" for n in nodes),
        comments=sum(n.kind == "comment" for n in nodes),
        toggleable=sum(n.toggleable for n in nodes),
        enabled=sum(n.toggleable and n.enabled for n in nodes),
        depth_injections=sum(n.is_depth_injection for n in nodes),
        not_in_order=not_in_order,
    )
