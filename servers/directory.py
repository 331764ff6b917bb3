"""The server directory the bot pushes (`POST /api/v1/servers/<id>/directory`): channel and member
names for the pages. Reading a pushed body is pure and bounded: at most MAX_CHANNELS channels and
MAX_MEMBERS members, names of at most NAME_MAX characters, every id a Discord id in either spelling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from .api_auth import ApiError, refuse_unknown_fields
from .snowflakes import snowflake_or_none

MAX_CHANNELS = 1000
MAX_MEMBERS = 5000
NAME_MAX = 100

_Entry = TypeVar("_Entry", "DirectoryChannel", "DirectoryMember")


@dataclass(frozen=True, slots=True)
class DirectoryChannel:
    id: int
    name: str
    parent: int | None
    private: bool


@dataclass(frozen=True, slots=True)
class DirectoryMember:
    id: int
    display_name: str


def read_directory(body: Any) -> tuple[list[DirectoryChannel], list[DirectoryMember]]:
    """The channels and members of a pushed body; ApiError (400) naming the first bad field."""
    if not isinstance(body, dict):
        raise ApiError("The request body must be a JSON object with `channels` and `members`.")
    refuse_unknown_fields(body, ("channels", "members"))
    channels, members = body.get("channels", []), body.get("members", [])
    if not isinstance(channels, list) or len(channels) > MAX_CHANNELS:
        raise ApiError(f"`channels` must be a list of at most {MAX_CHANNELS} channels.")
    if not isinstance(members, list) or len(members) > MAX_MEMBERS:
        raise ApiError(f"`members` must be a list of at most {MAX_MEMBERS} members.")
    read_channels = [_channel(entry, f"channels[{i}]") for i, entry in enumerate(channels)]
    read_members = [_member(entry, f"members[{i}]") for i, entry in enumerate(members)]
    return _unique(read_channels), _unique(read_members)


def _channel(entry: Any, label: str) -> DirectoryChannel:
    if not isinstance(entry, dict):
        raise ApiError(f"`{label}` must be an object.")
    refuse_unknown_fields(entry, ("id", "name", "parent", "private"), where=f"`{label}`")
    parent = entry.get("parent")
    private = entry.get("private", False)
    if not isinstance(private, bool):
        raise ApiError(f"`{label}.private` must be true or false.")
    return DirectoryChannel(
        id=_id(entry.get("id"), f"{label}.id"),
        name=_name(entry.get("name"), f"{label}.name"),
        parent=None if parent is None else _id(parent, f"{label}.parent"),
        private=private,
    )


def _member(entry: Any, label: str) -> DirectoryMember:
    if not isinstance(entry, dict):
        raise ApiError(f"`{label}` must be an object.")
    refuse_unknown_fields(entry, ("id", "display_name"), where=f"`{label}`")
    return DirectoryMember(
        id=_id(entry.get("id"), f"{label}.id"),
        display_name=_name(entry.get("display_name"), f"{label}.display_name"),
    )


def _id(value: Any, label: str) -> int:
    parsed = snowflake_or_none(value)
    if parsed is None:
        raise ApiError(f"`{label}` must be a Discord id: a positive whole number, as a string or a number.")
    return parsed


def _name(value: Any, label: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > NAME_MAX:
        raise ApiError(f"`{label}` must be text of 1 to {NAME_MAX} characters.")
    return value.strip()


def _unique(entries: list[_Entry]) -> list[_Entry]:
    """The last entry for each id wins (a bot may list a channel twice while it pages)."""
    return list({entry.id: entry for entry in entries}.values())
