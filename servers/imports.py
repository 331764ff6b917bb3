"""Importing something a server names (a preset, a lorebook, a card) when the name is taken: one rule
for every kind. The caller is inside its write's transaction; the server's row is locked first, so
two imports of one server are serialised (the unique name per server is the guarantee behind it).

- "ask" (the default): raise the kind's `NameClash`, nothing written; the page asks the user.
- "replace": the existing row is returned for the caller to replace (each kind carries over what it
  keeps: the active flag, a preset's choices and history).
- "keep_both": the new one takes the first free " (2)", " (3)"… name (core.names.free_name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from django.db.models import Model, QuerySet

from core.errors import NameClash as NameClash  # with the roots; the importers raise it from here
from core.names import free_name

from .models import Server

OnClash = Literal["ask", "replace", "keep_both"]
ON_CLASH_CHOICES: tuple[OnClash, ...] = ("ask", "replace", "keep_both")


def on_clash_from(value: object) -> OnClash:
    """What a form or query string asks for on a name clash: one of the choices, else "ask"."""
    return next((choice for choice in ON_CLASH_CHOICES if value == choice), "ask")


R = TypeVar("R", bound=Model)


def lock_server(server_id: int) -> None:
    """Serialise the server's writes that check before they write (inside a transaction)."""
    Server.objects.select_for_update().filter(pk=server_id).first()


@dataclass(frozen=True, slots=True)
class Placement(Generic[R]):
    """Where an import goes: the name to store it under, and the row it replaces (or None)."""

    name: str
    replaces: R | None


def place_import(
    *,
    server_id: int,
    rows: QuerySet[R],
    wanted: str,
    on_clash: OnClash,
    max_length: int,
    clash: type[NameClash],
) -> Placement[R]:
    """Lock the server and decide the import's name by `on_clash` (see the module); raises `clash`
    when the name is taken and `on_clash` is "ask". `rows` are the server's rows of that kind."""
    lock_server(server_id)
    existing = rows.filter(name=wanted).first()
    if existing is None:
        return Placement(wanted, None)
    if on_clash == "replace":
        return Placement(wanted, existing)
    if on_clash == "keep_both":
        return Placement(free_name(rows, wanted, max_length=max_length), None)
    raise clash(wanted)
