"""How the importer words lists and counts in its sentences."""

from __future__ import annotations

from collections.abc import Iterable

LIST_LIMIT = 4


def short_list(items: Iterable[str], limit: int = LIST_LIMIT) -> str:
    """`a, b, c, d +N more`: the first `limit` items, then how many were left out."""
    items = list(items)
    shown = ", ".join(items[:limit])
    if len(items) > limit:
        return f"{shown} +{len(items) - limit} more"
    return shown


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """`1 node`, `3 nodes`: the count with the right noun form."""
    word = singular if count == 1 else (plural_form or singular + "s")
    return f"{count} {word}"


class Findings:
    """Problems grouped by kind, each kind becoming one sentence that names the nodes involved."""

    def __init__(self) -> None:
        self._names: dict[str, list[str]] = {}

    def add(self, lead: str, name: str) -> None:
        """Record `name` under the sentence lead `lead` (e.g. "Unknown role, sent as system")."""
        self._names.setdefault(lead, []).append(name)

    def sentences(self) -> list[str]:
        """One sentence per lead, in the order leads were first seen: `Lead: a, b, c, d +N more.`"""
        return [f"{lead}: {short_list(names)}." for lead, names in self._names.items()]
