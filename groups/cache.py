"""Groups as a request reads them, from the shared cache: a warm assembly or next-speaker decision
reads no table.

Three `servers.generational_cache` declarations:
- `GROUPS`, one group by (server, name) with its members' cards as plain data, and `CHANNELS`, the
  server's channel → group map, ride the cards' stamp (`cards`): a card imported, replaced or
  deleted bumps it, and so does every group write here, so a group never outlives a change of one
  of its cards.
- `NOTES`, the members' private notes per (server, channel), and `AUTHORS_NOTES`, the channel's
  Author's Note, ride their own stamp (`group_notes`): the model writes notes often, and a note
  should not reload the server's cards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from characters import selectors as card_selectors
from engine.cards import Card
from engine.groups import Group, GroupMember
from servers.generational_cache import GenerationalCache

from .models import ChannelAuthorsNote, ChannelGroup, MemberNote
from .models import Group as GroupRow
from .models import GroupMember as MemberRow

LOCAL_ENTRIES = 64
STAMP = "cards"
NOTES_STAMP = "group_notes"


@dataclass(frozen=True, slots=True)
class LoadedGroup:
    """A stored group as the engine sees it, with its members' ids (their cards' ids) in order."""

    group: Group
    ids: tuple[int, ...]

    def id_of(self, name: str) -> int | None:
        for member, member_id in zip(self.group.members, self.ids, strict=True):
            if member.name == name:
                return member_id
        return None

    def name_of(self, member_id: int) -> str | None:
        for member, known in zip(self.group.members, self.ids, strict=True):
            if known == member_id:
                return member.name
        return None


def load_group(key: tuple[int, str]) -> dict[str, Any] | None:
    """One group's plain data (members in order, each with its card), or None."""
    server_id, name = key
    row = GroupRow.objects.filter(server_id=server_id, name=name).first()
    if row is None:
        return None
    members = list(MemberRow.objects.filter(group=row).order_by("position").values("card_id", "muted"))
    cards = card_selectors.cards_by_id(server_id, [m["card_id"] for m in members])
    return {
        "name": row.name,
        "mode": row.mode,
        "join_prefix": row.join_prefix,
        "join_suffix": row.join_suffix,
        "strategy": row.strategy,
        "allow_self_responses": row.allow_self_responses,
        "members": [
            {"id": m["card_id"], "muted": m["muted"], "card": cards[m["card_id"]].fields}
            for m in members
            if m["card_id"] in cards
        ],
    }


def compile_group(plain: dict[str, Any] | None) -> LoadedGroup | None:
    if plain is None:
        return None
    group = Group(
        name=plain["name"],
        members=tuple(
            GroupMember(card=Card.from_dict(m["card"]), muted=m["muted"]) for m in plain["members"]
        ),
        mode=plain["mode"],
        join_prefix=plain["join_prefix"],
        join_suffix=plain["join_suffix"],
        strategy=plain["strategy"],
        allow_self_responses=plain["allow_self_responses"],
    )
    return LoadedGroup(group=group, ids=tuple(m["id"] for m in plain["members"]))


def _load_channels(server_id: int) -> dict[int, str]:
    rows = ChannelGroup.objects.filter(server_id=server_id).values_list("channel_id", "group__name")
    return dict(rows)


def _load_notes(key: tuple[int, int]) -> dict[int, str]:
    server_id, channel_id = key
    rows = MemberNote.objects.filter(server_id=server_id, channel_id=channel_id)
    return dict(rows.values_list("card_id", "text"))


def _load_authors_note(key: tuple[int, int]) -> str:
    server_id, channel_id = key
    row = ChannelAuthorsNote.objects.filter(server_id=server_id, channel_id=channel_id).first()
    return "" if row is None else row.text


GROUPS: GenerationalCache[tuple[int, str], dict[str, Any] | None, LoadedGroup | None] = GenerationalCache(
    name="groups:group",
    stamp=STAMP,
    load=load_group,
    compile=compile_group,
    server_of=lambda key: key[0],
    local_entries=LOCAL_ENTRIES,
    valid=lambda plain: plain is None or isinstance(plain, dict),
)
CHANNELS: GenerationalCache[int, dict[int, str], dict[int, str]] = GenerationalCache(
    name="groups:channels",
    stamp=STAMP,
    load=_load_channels,
    local_entries=LOCAL_ENTRIES,
    valid=lambda plain: isinstance(plain, dict),
)
NOTES: GenerationalCache[tuple[int, int], dict[int, str], dict[int, str]] = GenerationalCache(
    name="groups:notes",
    stamp=NOTES_STAMP,
    load=_load_notes,
    server_of=lambda key: key[0],
    local_entries=LOCAL_ENTRIES,
    valid=lambda plain: isinstance(plain, dict),
)


AUTHORS_NOTES: GenerationalCache[tuple[int, int], str, str] = GenerationalCache(
    name="groups:authors_note",
    stamp=NOTES_STAMP,
    load=_load_authors_note,
    server_of=lambda key: key[0],
    local_entries=LOCAL_ENTRIES,
    valid=lambda plain: isinstance(plain, str),
)


def get_group(server_id: int, name: str) -> LoadedGroup | None:
    """The server's group named `name` (members' cards included), or None."""
    return GROUPS.get((server_id, name))


def get_channel_group(server_id: int, channel: int, parent_channel: int | None = None) -> str | None:
    """The name of the group a channel uses (a thread without its own uses its parent's), or None."""
    mapping = CHANNELS.get(server_id)
    name = mapping.get(channel)
    if name is None and parent_channel is not None:
        name = mapping.get(parent_channel)
    return name


def get_notes(server_id: int, channel: int) -> dict[int, str]:
    """The members' notes in a channel, by member id (card id)."""
    return NOTES.get((server_id, channel))


def get_authors_note(server_id: int, channel: int) -> str:
    """The channel's Author's Note ("" when it has none)."""
    return AUTHORS_NOTES.get((server_id, channel))
