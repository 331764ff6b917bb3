"""Writes for groups (docs/groups.md): create or replace a group, delete it, give a channel a group,
and keep a member's private note. Each is one transaction with an audit event
(servers.writes.server_write), which bumps the groups' cache stamp inside it (the generation moves
when the write commits)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from characters import selectors as card_selectors
from core.actors import Actor, user_of
from core.errors import UserError
from core.names import clean_name
from engine.groups import GENERATION_MODES, MAX_MEMBERS, STRATEGIES
from servers.audit_actions import AuditAction
from servers.imports import NameClash
from servers.models import AuditEvent, Server
from servers.writes import server_write

from . import cache as group_cache
from .models import (
    AUTHORS_NOTE_MAX_LENGTH,
    JOIN_TEXT_MAX_LENGTH,
    NAME_MAX_LENGTH,
    NOTE_MAX_LENGTH,
    ChannelAuthorsNote,
    ChannelGroup,
    MemberNote,
)
from .models import Group as GroupRow
from .models import GroupMember as MemberRow

MAX_GROUPS_PER_SERVER = 64
MAX_CHANNEL_ID = 2**63 - 1
TRIGGER_MESSAGE_MAX_LENGTH = 2_000


class GroupError(UserError):
    """A group write that cannot be done as asked; `message` is one sentence for the user."""


class GroupNameClash(NameClash, GroupError):
    kind = "group"
    command_hint = "Use --replace to change it."


def group_save(
    *,
    server: Server,
    name: str,
    members: Sequence[str],
    muted: Sequence[str] = (),
    mode: str = "swap",
    join_prefix: str = "",
    join_suffix: str = "",
    strategy: str = "natural",
    allow_self_responses: bool = False,
    replace: bool = False,
    by: Actor,
) -> GroupRow:
    """Create the group `name` (or, with `replace`, change the one of that name: its channels stay
    with it) with `members` (the server's card names, in order). Raises GroupError, naming what is
    wrong; nothing is written then."""
    name = clean_name(name, max_length=NAME_MAX_LENGTH + 1)
    if not name:
        raise GroupError("Give the group a name.")
    if len(name) > NAME_MAX_LENGTH:
        raise GroupError(f"A group name has at most {NAME_MAX_LENGTH} characters.")
    wanted = _member_names(members)
    muted_names = _muted_names(muted, wanted)
    if mode not in GENERATION_MODES:
        raise GroupError(f"“{mode}” is not a generation mode: use {', '.join(GENERATION_MODES)}.")
    if strategy not in STRATEGIES:
        raise GroupError(f"“{strategy}” is not an activation strategy: use {', '.join(STRATEGIES)}.")
    for label, text in (("join prefix", join_prefix), ("join suffix", join_suffix)):
        if len(text) > JOIN_TEXT_MAX_LENGTH:
            raise GroupError(f"The {label} has at most {JOIN_TEXT_MAX_LENGTH} characters.")
    with server_write(server_id=server.pk, stamps=(group_cache.STAMP,), lock=True):
        cards = card_selectors.cards_named(server.pk, wanted)
        for card_name in wanted:
            if card_name not in cards:
                raise GroupError(f"This server has no character card named “{card_name}”.")
        row = GroupRow.objects.filter(server=server, name=name).first()
        if row is not None and not replace:
            raise GroupNameClash(name)
        if row is None and GroupRow.objects.filter(server=server).count() >= MAX_GROUPS_PER_SERVER:
            raise GroupError(f"A server has at most {MAX_GROUPS_PER_SERVER} groups; delete one first.")
        settings = {
            "mode": mode,
            "join_prefix": join_prefix,
            "join_suffix": join_suffix,
            "strategy": strategy,
            "allow_self_responses": allow_self_responses,
        }
        replaced = row is not None
        if row is None:
            row = GroupRow.objects.create(
                server=server,
                name=name,
                created_by=user_of(by),
                **settings,
            )
        else:
            GroupRow.objects.filter(pk=row.pk).update(**settings)
            MemberRow.objects.filter(group=row).delete()
        MemberRow.objects.bulk_create(
            MemberRow(group=row, card=cards[card_name], position=index, muted=card_name in muted_names)
            for index, card_name in enumerate(wanted)
        )
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.GROUP_REPLACE if replaced else AuditAction.GROUP_CREATE,
            target=row,
            detail={"members": wanted, "muted": sorted(muted_names), **settings},
        )
    return row


def group_delete(*, group: GroupRow, by: Actor) -> None:
    """Delete a group; the channels that used it go back to the server's character."""
    with server_write(server_id=group.server_id, stamps=(group_cache.STAMP,)):
        AuditEvent.record(
            server=group.server_id,
            actor=by,
            action=AuditAction.GROUP_DELETE,
            target=group,
            detail={"name": group.name},
        )
        group.delete()


def channel_group_set(*, server: Server, channel_id: int, group: GroupRow | None, by: Actor) -> bool:
    """Make `channel_id` use `group` instead of the server's character, or clear it with None.
    Returns whether anything changed."""
    if not 0 < channel_id <= MAX_CHANNEL_ID:
        raise GroupError("A channel id is a positive Discord snowflake.")
    if group is not None and group.server_id != server.pk:
        raise GroupError("Choose one of this server's groups.")
    with server_write(server_id=server.pk, lock=True) as write:
        current = ChannelGroup.objects.filter(server=server, channel_id=channel_id).first()
        if group is None:
            if current is None:
                return False
            current.delete()
            action, detail = AuditAction.GROUP_CHANNEL_CLEAR, {"channel": str(channel_id)}
        else:
            if current is not None and current.group_id == group.pk:
                return False
            ChannelGroup.objects.update_or_create(
                server=server,
                channel_id=channel_id,
                defaults={"group": group, "set_by": user_of(by)},
            )
            action, detail = AuditAction.GROUP_CHANNEL_SET, {"channel": str(channel_id), "group": group.name}
        AuditEvent.record(server=server, actor=by, action=action, target=group, detail=detail)
        write.touch(group_cache.STAMP)  # a channel left as it was bumps nothing
    return True


def member_note_set(
    *,
    server: Server | int,
    group_name: str,
    channel_id: int,
    member: str | int,
    text: str,
    by: Actor,
) -> tuple[int, str]:
    """Keep `text` as the private note of `member` (a member's name or id) of the group in one
    channel (empty text removes it). Returns the member's (id, name). Raises GroupError."""
    server_id = server if isinstance(server, int) else server.pk
    if not 0 < channel_id <= MAX_CHANNEL_ID:
        raise GroupError("A channel id is a positive Discord snowflake.")
    if len(text) > NOTE_MAX_LENGTH:
        raise GroupError(f"A member note has at most {NOTE_MAX_LENGTH} characters.")
    loaded = group_cache.get_group(server_id, group_name)
    if loaded is None:
        raise GroupError(f"This server has no group named “{group_name}”.")
    member_id, member_name = member_of(loaded, member)
    with server_write(server_id=server_id, stamps=(group_cache.NOTES_STAMP,)):
        if text.strip():
            MemberNote.objects.update_or_create(
                server_id=server_id, channel_id=channel_id, card_id=member_id, defaults={"text": text}
            )
        else:
            MemberNote.objects.filter(server_id=server_id, channel_id=channel_id, card_id=member_id).delete()
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.GROUP_NOTE if text.strip() else AuditAction.GROUP_NOTE_CLEAR,
            target=None,
            detail={
                "group": group_name,
                "channel": str(channel_id),
                "member": member_name,
                "chars": len(text),
            },
        )
    return member_id, member_name


def authors_note_set(*, server: Server | int, channel_id: int, text: str, by: Actor) -> bool:
    """Keep `text` as the channel's Author's Note (blank text removes it). Returns whether the
    channel has a note now. Raises GroupError."""
    server_id = server if isinstance(server, int) else server.pk
    if not 0 < channel_id <= MAX_CHANNEL_ID:
        raise GroupError("A channel id is a positive Discord snowflake.")
    if len(text) > AUTHORS_NOTE_MAX_LENGTH:
        raise GroupError(f"An Author's Note has at most {AUTHORS_NOTE_MAX_LENGTH} characters.")
    kept = bool(text.strip())
    with server_write(server_id=server_id, stamps=(group_cache.NOTES_STAMP,)):
        if kept:
            ChannelAuthorsNote.objects.update_or_create(
                server_id=server_id, channel_id=channel_id, defaults={"text": text}
            )
        else:
            ChannelAuthorsNote.objects.filter(server_id=server_id, channel_id=channel_id).delete()
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.GROUP_AUTHORS_NOTE if kept else AuditAction.GROUP_AUTHORS_NOTE_CLEAR,
            detail={"channel": str(channel_id), "chars": len(text)} if kept else {"channel": str(channel_id)},
        )
    return kept


def dice_roll_record(
    *, server_id: int, channel_id: int, formula: str, rolls: list[int], total: int, by: Actor
) -> None:
    """Audit one roll_dice call: who rolled what in which channel, and what came up."""
    with transaction.atomic():
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.GROUP_DICE,
            detail={"channel": str(channel_id), "formula": formula, "rolls": rolls, "total": total},
        )


def member_of(loaded: group_cache.LoadedGroup, member: str | int) -> tuple[int, str]:
    """The (id, name) of a member named or numbered `member`; GroupError when it is not one."""
    if isinstance(member, int) and not isinstance(member, bool):
        name = loaded.name_of(member)
        if name is not None:
            return member, name
        raise GroupError(f"The group “{loaded.group.name}” has no member with id {member}.")
    if isinstance(member, str):
        wanted = member.strip()
        member_id = loaded.id_of(wanted)
        if member_id is not None:
            return member_id, wanted
        if wanted.isdigit() and loaded.name_of(int(wanted)) is not None:
            return int(wanted), loaded.name_of(int(wanted)) or ""
        raise GroupError(f"“{wanted[:100]}” is not a member of the group “{loaded.group.name}”.")
    raise GroupError("Name the member by its name or its id.")


def _member_names(members: Sequence[str]) -> list[str]:
    names = [str(m).strip() for m in members]
    names = [n for n in names if n]
    if not names:
        raise GroupError("Name at least one member: the server's character cards, by name.")
    seen: set[str] = set()
    for card_name in names:
        if card_name in seen:
            raise GroupError(f"“{card_name}” is named twice in the member list.")
        seen.add(card_name)
    if len(names) > MAX_MEMBERS:
        raise GroupError(f"A group has at most {MAX_MEMBERS} members.")
    return names


def _muted_names(muted: Sequence[str], members: list[str]) -> set[str]:
    names = {str(m).strip() for m in muted} - {""}
    for card_name in sorted(names):
        if card_name not in members:
            raise GroupError(f"“{card_name}” is muted but is not a member of the group.")
    return names


def member_trigger_record(*, server_id: int, group_name: str, member: str, message: str, by: Actor) -> None:
    """Audit one trigger_group_member call: a member asked another to answer next."""
    if len(message) > TRIGGER_MESSAGE_MAX_LENGTH:
        raise GroupError(f"A trigger message has at most {TRIGGER_MESSAGE_MAX_LENGTH} characters.")
    with transaction.atomic():
        AuditEvent.record(
            server=server_id,
            actor=by,
            action=AuditAction.GROUP_TRIGGER,
            detail={"group": group_name, "member": member, "chars": len(message)},
        )
