"""Reads for groups: the server's groups for pages and commands, the engine's `Group` for a request
(cached, groups/cache.py), a channel's group and the members' notes, and the JSON shape every
command and API answers a group in."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from characters import selectors as card_selectors
from engine.groups import Group
from servers.models import Server
from servers.selectors import channels_for

from . import cache as group_cache
from .cache import LoadedGroup
from .models import ChannelAuthorsNote, ChannelGroup, MemberNote
from .models import Group as GroupRow


def groups_for(server: Server | int) -> list[GroupRow]:
    """The server's groups by name."""
    server_id = server if isinstance(server, int) else server.pk
    return list(GroupRow.objects.filter(server_id=server_id).order_by("name", "id"))


def group_named(server_id: int, name: str) -> GroupRow | None:
    return GroupRow.objects.filter(server_id=server_id, name=name).first()


def group_count(server_id: int) -> int:
    return GroupRow.objects.filter(server_id=server_id).count()


def engine_group(server_id: int, name: str) -> Group | None:
    """The server's group named `name` as the engine takes it (from the cache), or None."""
    loaded = group_cache.get_group(server_id, name)
    return None if loaded is None else loaded.group


def loaded_group(server_id: int, name: str) -> LoadedGroup | None:
    """The group with its members' ids (from the cache), or None."""
    return group_cache.get_group(server_id, name)


def loaded_group_fresh(server_id: int, name: str) -> LoadedGroup | None:
    """The group read from the database, past the cache (the answer to a write, before the write's
    generation is published on commit)."""
    return group_cache.compile_group(group_cache.load_group((server_id, name)))


def channel_group(server_id: int, channel: int, parent_channel: int | None = None) -> str | None:
    """The name of the group `channel` uses (a thread inherits its parent's), or None (from the cache)."""
    return group_cache.get_channel_group(server_id, channel, parent_channel)


def channels_using(server_id: int) -> dict[str, list[int]]:
    """Group name → the channels that use it (for listings)."""
    out: dict[str, list[int]] = {}
    rows = ChannelGroup.objects.filter(server_id=server_id).order_by("channel_id")
    for channel_id, name in rows.values_list("channel_id", "group__name"):
        out.setdefault(name, []).append(channel_id)
    return out


def member_note(server_id: int, channel: int, member_id: int) -> str | None:
    """A member's note in a channel (from the cache), or None."""
    return group_cache.get_notes(server_id, channel).get(member_id)


def authors_note(server_id: int, channel: int) -> str:
    """The channel's Author's Note, "" when it has none (from the cache)."""
    return group_cache.get_authors_note(server_id, channel)


def member_notes(server_id: int, channel: int) -> dict[int, str]:
    return group_cache.get_notes(server_id, channel)


class GroupMemberJson(TypedDict):
    id: NotRequired[int]  # the card's id (the API's answer)
    name: str
    muted: bool


class GroupJson(TypedDict):
    name: str
    members: list[GroupMemberJson]
    mode: str
    join_prefix: str
    join_suffix: str
    strategy: str
    allow_self_responses: bool


def group_json(loaded: LoadedGroup, *, with_ids: bool = False) -> GroupJson:
    """The group as the commands and the API print it: name, members in order with their muted
    flags, mode, join prefix and suffix, strategy and whether a member may answer itself."""
    group = loaded.group
    members: list[GroupMemberJson] = []
    for member, member_id in zip(group.members, loaded.ids, strict=True):
        if with_ids:
            members.append({"id": member_id, "name": member.name, "muted": member.muted})
        else:
            members.append({"name": member.name, "muted": member.muted})
    return {
        "name": group.name,
        "members": members,
        "mode": group.mode,
        "join_prefix": group.join_prefix,
        "join_suffix": group.join_suffix,
        "strategy": group.strategy,
        "allow_self_responses": group.allow_self_responses,
    }


def members_of(group: GroupRow) -> list[Any]:
    """A group's member rows, in order (card ids and muted flags)."""
    return list(group.memberships.order_by("position"))


def group_of(server: Server, group_id: int) -> GroupRow | None:
    return GroupRow.objects.filter(server=server, pk=group_id).first()


def groups_page(server: Server) -> list[dict[str, Any]]:
    """Each group of the server for the Groups page: the row, its members (name, card id, muted,
    whether the card has an image) in order, and the channels using it."""
    channels = channels_using(server.pk)
    out = []
    for row in groups_for(server):
        loaded = group_cache.get_group(server.pk, row.name)
        members = []
        if loaded is not None:
            members = [
                {"name": m.name, "card_id": member_id, "muted": m.muted}
                for m, member_id in zip(loaded.group.members, loaded.ids, strict=True)
            ]
        out.append({"row": row, "members": members, "channels": channels.get(row.name, [])})
    return out


def notes_for(server: Server, *, channel: int | None = None, limit: int = 200) -> list[dict[str, Any]]:
    """The members' notes on the server (in one channel when `channel` is given), newest first (at
    most `limit`), with the members' names."""
    notes = MemberNote.objects.filter(server=server)
    if channel is not None:
        notes = notes.filter(channel_id=channel)
    rows = list(notes.order_by("-updated_at", "-pk")[:limit])
    names = {
        pk: row.name for pk, row in card_selectors.cards_by_id(server.pk, [r.card_id for r in rows]).items()
    }
    return [
        {
            "channel": r.channel_id,
            "card_id": r.card_id,
            "member": names.get(r.card_id, "?"),
            "text": r.text,
            "updated_at": r.updated_at,
        }
        for r in rows
    ]


def channel_labels(server: Server) -> dict[int, str]:
    """`#name` per channel id the bot has named (in its directory push or with a turn), so the pages
    show names rather than ids."""
    return {row.discord_id: f"#{row.name}" for row in channels_for(server) if row.name}


def authors_notes_for(server: Server, *, limit: int = 200) -> list[dict[str, Any]]:
    """The channels' Author's Notes on the server, newest first (at most `limit`)."""
    rows = ChannelAuthorsNote.objects.filter(server=server).order_by("-updated_at", "-pk")[:limit]
    return [{"channel": r.channel_id, "text": r.text, "updated_at": r.updated_at} for r in rows]


def groups_with_card(server_id: int, card_id: int) -> list[str]:
    """The names of the server's groups the card is a member of."""
    rows = GroupRow.objects.filter(server_id=server_id, memberships__card_id=card_id).order_by("name")
    return list(rows.values_list("name", flat=True).distinct())


def card_use_words(server_id: int, card_id: int) -> str:
    """The groups a card is a member of, in words for the card's pages ("" when none)."""
    names = groups_with_card(server_id, card_id)
    quoted = ", ".join(f"“{name}”" for name in names)
    return "" if not names else f"the group {quoted}" if len(names) == 1 else f"the groups {quoted}"
