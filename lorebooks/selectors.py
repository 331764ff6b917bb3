"""Reads for lorebooks: lists, entry lists with filters, settings, and what the cache is built from."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet, Subquery, Sum
from django.db.models.functions import Length

from engine.worldinfo import COMPILED_FORMAT, POSITIONS, Entry, WorldInfoSettings, entry_from_st
from servers.models import Server

from .models import Lorebook, LorebookEntry, WorldInfoSettingsRow

ENTRY_FILTER_LABELS = (
    ("enabled", "enabled"),
    ("disabled", "disabled"),
    ("constant", "constant"),
    *((str(p), f"position: {name}") for p, name in POSITIONS.items()),
)
ENTRY_FILTERS = tuple(value for value, _ in ENTRY_FILTER_LABELS)


def lorebooks_for(server: Server | int) -> list[Lorebook]:
    """The server's lorebooks by name, without their original text."""
    server_id = server.pk if isinstance(server, Server) else server
    return list(Lorebook.objects.filter(server_id=server_id).defer("original_text").order_by("name", "id"))


def lorebook_of(server: Server, lorebook_id: int) -> Lorebook | None:
    """One lorebook of the server (original text deferred), or None."""
    return server.lorebooks.defer("original_text").filter(pk=lorebook_id).first()


def entries_for(lorebook: Lorebook, *, query: str = "", show: str = "") -> QuerySet[LorebookEntry]:
    """The lorebook's entries in file order, narrowed by a comment/key/content search and a filter."""
    entries = LorebookEntry.objects.filter(lorebook=lorebook).order_by("index")
    query = query.strip()
    if query:
        entries = entries.filter(
            Q(comment__icontains=query) | Q(keys__icontains=query) | Q(data__content__icontains=query)
        )
    if show == "enabled":
        entries = entries.filter(enabled=True)
    elif show == "disabled":
        entries = entries.filter(enabled=False)
    elif show == "constant":
        entries = entries.filter(constant=True)
    elif show in ENTRY_FILTERS:
        entries = entries.filter(position=int(show))
    return entries


def engine_entries(lorebook_id: int) -> tuple[Entry, ...]:
    """The lorebook's entries as the engine reads them, in file order."""
    rows = LorebookEntry.objects.filter(lorebook_id=lorebook_id).order_by("index").values_list("uid", "data")
    return tuple(entry_from_st(data, uid) for uid, data in rows)


def active_compiled(server_id: int) -> list[tuple[int, str, bytes | None, dict[int, bool]]]:
    """(id, name, compiled bytes or None, entries switched since by uid) of the server's active
    lorebooks, by name; None when the book has no compiled form in this engine's layout (compile it
    from its entries, which already carry every switch)."""
    rows = (
        Lorebook.objects.filter(server_id=server_id, is_active=True)
        .order_by("name", "id")
        .values_list("id", "name", "compiled__format", "compiled__data", "compiled__switched")
    )
    out: list[tuple[int, str, bytes | None, dict[int, bool]]] = []
    for pk, name, fmt, data, switched in rows:
        if data is None or fmt != COMPILED_FORMAT:
            out.append((pk, name, None, {}))
        else:
            out.append((pk, name, bytes(data), {int(uid): on for uid, on in (switched or {}).items()}))
    return out


def world_info_settings(server: Server | int) -> WorldInfoSettings:
    """The server's World Info settings (SillyTavern's defaults when it never changed them)."""
    server_id = server.pk if isinstance(server, Server) else server
    row = WorldInfoSettingsRow.objects.filter(server_id=server_id).first()
    return row.as_settings() if row is not None else WorldInfoSettings()


def active_size(server: Any) -> tuple[Subquery, Subquery]:
    """(entries, characters of their files) of the server's active lorebooks together, as two
    expressions for a query over the servers (`server`: an OuterRef to the server's id); NULL when
    none is active."""
    active = Lorebook.objects.filter(server_id=server, is_active=True).order_by().values("server_id")
    entries = active.annotate(total=Sum("entry_count")).values("total")
    size = active.annotate(size=Sum(Length("original_text"))).values("size")
    return Subquery(entries), Subquery(size)
