"""Names a server gives what it imports (presets, lorebooks, cards): stored trimmed and cut to the
column, and " (2)", " (3)"… when an import keeps both."""

from __future__ import annotations

from django.db.models import QuerySet


def clean_name(name: str | None, *, max_length: int) -> str:
    """A name as stored: whitespace trimmed, cut to the column's length."""
    return (name or "").strip()[:max_length].strip()


def free_name(existing: QuerySet, name: str, *, max_length: int) -> str:
    """`name` with the first " (N)" from 2 up that none of `existing` (the server's rows of that
    kind, with a `name` column) uses, still within `max_length`."""
    # Every candidate starts with this prefix (a longer cut, trimmed, still begins with it).
    prefix = name[: max_length - 8].rstrip()
    taken = set(existing.filter(name__startswith=prefix).values_list("name", flat=True))
    number = 2
    while True:
        suffix = f" ({number})"
        candidate = name[: max_length - len(suffix)].rstrip() + suffix
        if candidate not in taken:
            return candidate
        number += 1
