"""The JSON shapes the CLI and the API share for lorebooks."""

from __future__ import annotations

from typing import Any, TypedDict

from .models import Lorebook
from .services import ImportResult


def import_report(result: ImportResult) -> dict[str, Any]:
    """The import summary as JSON (docs/worldinfo.md#import; the CLI contract's keys first)."""
    summary = result.summary
    return {
        "name": result.lorebook.name,
        "entries": summary.entries,
        "enabled": summary.enabled,
        "constant": summary.constant,
        "positions": dict(summary.positions),
        "regex_keys": summary.regex_keys,
        "warnings": list(summary.warnings),
        "regex_keys_failed": list(summary.regex_keys_failed),
        "timed": summary.timed,
        "groups": list(summary.groups),
        "source": summary.source,
        "lorebook_id": result.lorebook.pk,
        "active": result.lorebook.is_active,
        "replaced": result.replaced,
    }


class LorebookListingJson(TypedDict):
    lorebook_id: int
    name: str
    active: bool
    entries: int
    enabled: int
    source: str
    updated_at: str


def lorebook_listing(lorebook: Lorebook) -> LorebookListingJson:
    """One row of a lorebook list."""
    return {
        "lorebook_id": lorebook.pk,
        "name": lorebook.name,
        "active": lorebook.is_active,
        "entries": lorebook.entry_count,
        "enabled": lorebook.summary.get("enabled", lorebook.entry_count),
        "source": lorebook.source,
        "updated_at": lorebook.updated_at.isoformat(),
    }
