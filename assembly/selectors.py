"""Reads for assembly: sample buckets, the preset to assemble with, stored short-term memory, and
`assemble_for_server`, the one entry point the API, the CLI and the preview share.

Assembling never writes. With the preset cache and the token cache warm and inline STM, it makes no
SQL query at all (the API asserts it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from characters import cache as card_cache
from conversations.channels import selectors as channel_selectors
from core.errors import UserError
from engine import Assembly, BucketDocument, CompiledPreset, StmLine, StoredStm, assemble
from engine.cards import Card, card_book
from engine.groups import TOOL_NAMES, ChatLine, Group, GroupTurn, next_speakers, with_group_tools
from engine.sampling import PROVIDERS, GenerationSettings, generation_settings
from engine.worldinfo import CompiledBook, Replay, WorldInfoInput
from groups import selectors as group_selectors
from lorebooks import cache as lorebook_cache
from memory.selectors import stm_contribution
from presets import cache as preset_cache
from presets import selectors as preset_selectors
from presets.channels import cache as channel_cache
from presets.sampling import cache as sampling_cache
from presets.selectors import PresetNotFound
from regex_scripts.selectors import script_set
from servers.selectors import tokenizer_for

from .bucket_models import SampleBucket

DEFAULT_BUCKETS_PATH = Path(__file__).with_name("default_buckets.json")
DEFAULT_SAMPLE_NAME = "Default sample"


class GroupRefused(UserError, ValueError):
    """The document's `group` names no group of the server, or a speaker who is not a member;
    `message` is one sentence naming it (the API answers 400, the command exits 2)."""


@dataclass(frozen=True, slots=True)
class GroupPreview:
    """What the preview shows of a group turn: the group, the speaker, who the group's strategy
    would have answer after the document's history (with the assembly's seed), and the speaker's
    note in the document's channel."""

    name: str
    speaker: str
    mode: str
    strategy: str
    members: tuple[tuple[str, bool], ...]  # (name, muted) in order
    next_speakers: tuple[str, ...]
    note: str
    authors_note: str = ""  # the channel's stored Author's Note (set_author_note), when it is sent
    tools: tuple[str, ...] = ()  # the group tools the provider body declares (`group_tools`)


@cache
def _default_text() -> str:
    return DEFAULT_BUCKETS_PATH.read_text(encoding="utf-8")


def default_document() -> dict[str, Any]:
    """A fresh copy of the shipped default bucket document."""
    return json.loads(_default_text())


def sample_buckets_for(server_id: int) -> list[SampleBucket]:
    """The server's sample buckets by name."""
    return list(SampleBucket.objects.filter(server_id=server_id).order_by("name", "id"))


def sample_bucket_named(server_id: int, name: str) -> SampleBucket | None:
    """One sample bucket of the server by name, or None."""
    return SampleBucket.objects.filter(server_id=server_id, name=name).first()


def preset_for_assembly(
    server_id: int,
    *,
    preset_id: int | None = None,
    preset_name: str | None = None,
    channel: int | None = None,
    parent_channel: int | None = None,
) -> CompiledPreset | None:
    """The compiled preset to assemble with: the one named or given by id (of this server), else
    the channel's own preset (a thread inherits its parent's), else the active one (all from the
    cache); None means native assembly. Raises PresetNotFound."""
    if preset_id is None and preset_name is None:
        if channel is not None:
            return channel_cache.get_preset_for_channel(server_id, channel, parent_channel)
        return preset_cache.get_active_preset(server_id)
    found = preset_selectors.preset_id_of(server_id, preset_id=preset_id, name=preset_name)
    if found is None:
        label = f"named {preset_name!r}" if preset_name is not None else f"with id {preset_id}"
        raise PresetNotFound(f"This server has no preset {label}.")
    return preset_cache.get_preset(found)


def stored_stm(server_id: int, doc: BucketDocument, *, now: datetime | None = None) -> StoredStm | None:
    """The stored short-term memory for the document's `stm_context`, or None when it names none."""
    if doc.stm_context is None:
        return None
    context = replace(doc.stm_context, impersonation=doc.impersonation)
    # Stored memory is live data: its expiry is judged against the real time, not the sample's `now`.
    moment = now or datetime.now(UTC)
    contribution = stm_contribution(
        server_id=server_id, context=context, now=moment, stored_turns=channel_selectors.recent_turns
    )
    summary = contribution.same_channel_summary.strip()
    lines = tuple(
        StmLine(
            role=item.role,
            text=item.text,
            same_channel=getattr(item, "kind", None) == "same_channel_summary"
            or (bool(summary) and summary == item.text.strip()),
        )
        for item in contribution.items
    )
    return StoredStm(lines=lines, tail_directive=contribution.tail_directive)


def assemble_for_server(
    *,
    server_id: int,
    doc: BucketDocument,
    preset_id: int | None = None,
    preset_name: str | None = None,
    native: bool = False,
    style: str | None = None,
    provider: str | None = None,
    seed: int | None = None,
    encoding: str | None = None,
    channel: int | None = None,
    parent_channel: int | None = None,
    channel_state: bool = False,
    replay_seed: int | None = None,
) -> Assembly:
    """Assemble `doc` for the server with the preset of the channel it names (`channel`, else the
    document's `stm_context.channel`; a thread inherits its parent's), else the active preset (or
    the one named, or none when `native`), and its active character card, using stored STM when the
    document names a channel and user. Token counts are for the requested provider, else the one of
    the server's sampling choice, with the server's tokenizer unless `encoding` names one
    (docs/assembly.md#tokens). The server's active lorebooks take part; with `channel_state` (the bot API) the
    World Info timed state is the one stored for that channel (the API stores the new one); with `replay_seed`
    (a sample conversation, docs/worldinfo.md#timed-effects) the one the document's history reaches, World
    Info replayed message by message with that seed; otherwise the document's `world_info_state`. Raises
    PresetNotFound and ValueError (bad style/provider/encoding)."""
    context = doc.stm_context
    if channel is None and context is not None:
        channel, parent_channel = context.channel, context.parent_channel
    elif context is not None and parent_channel is None and context.channel == channel:
        parent_channel = context.parent_channel
    preset = (
        None
        if native
        else preset_for_assembly(
            server_id,
            preset_id=preset_id,
            preset_name=preset_name,
            channel=channel,
            parent_channel=parent_channel,
        )
    )
    generation = generation_for(server_id, preset, provider)
    doc, channel_note = _channel_group_turn(server_id, doc, channel, parent_channel)
    group, card, doc = group_turn(server_id, doc, channel)
    doc = with_channel_authors_note(server_id, doc, channel)
    world_info = lorebook_cache.get_world_info(server_id)
    state_channel = str(channel) if channel_state and channel is not None else None
    encoding = encoding or tokenizer_for(server_id)
    replay = Replay(seed=replay_seed, cache_key=encoding) if replay_seed is not None else None
    result = assemble(
        doc,
        preset=preset,
        regex_scripts=script_set(server_id, preset, card).scripts,
        style=style,
        provider=provider,
        count_for=generation.provider,
        encoding=encoding,
        server_id=server_id,
        stm=stored_stm(server_id, doc),
        seed=seed,
        generation=generation,
        card=card,
        world_info=WorldInfoInput(
            books=_with_card_book(world_info.books, card),
            settings=world_info.settings,
            char_tags=card.tags if card is not None else (),
            state=lorebook_cache.read_state(server_id, state_channel) if state_channel else None,
            replay=replay,
        ),
        group=group,
    )
    if channel_note:
        result = replace(result, warnings=(*result.warnings, channel_note))
    if doc.group_tools:
        result = _with_group_tools(result, group)
    return result


def _with_group_tools(result: Assembly, group: Group | None) -> Assembly:
    """The provider body with the group tools declared (docs/groups.md), for a group turn."""
    if group is None:
        note = "`group_tools` declares the group tools only for a group turn (`group`): none were declared."
        return replace(result, warnings=(*result.warnings, note))
    if result.provider is None or result.provider_payload is None:
        return result
    return replace(result, provider_payload=with_group_tools(result.provider, result.provider_payload))


def group_turn(
    server_id: int, doc: BucketDocument, channel: int | None
) -> tuple[Group | None, Card | None, BucketDocument]:
    """The group, the card and the document to assemble with: for a group turn the speaker's card
    (whose own book alone joins the server's, docs/groups.md) and, when the chat sets no scenario
    override, the speaker's note in this channel as one; else no group and the active card."""
    turn = doc.group
    if turn is None:
        return None, card_cache.get_active_card(server_id), doc
    loaded = group_selectors.loaded_group(server_id, turn.name)
    if loaded is None:
        raise GroupRefused(f"This server has no group named “{turn.name}”.")
    member = loaded.group.member(turn.speaker)
    if member is None:
        raise GroupRefused(f"“{turn.speaker}” is not a member of the group “{turn.name}”.")
    if turn.scenario_override is None and channel is not None:
        note = group_selectors.member_note(server_id, channel, loaded.id_of(turn.speaker) or 0)
        if note:
            doc = replace(doc, group=replace(turn, scenario_override=note))
    return loaded.group, member.card, doc


def with_channel_authors_note(server_id: int, doc: BucketDocument, channel: int | None) -> BucketDocument:
    """The document with the channel's stored Author's Note (the set_author_note tool, docs/groups.md)
    as its note's text when the document brings no text of its own; the document's note settings
    (position, depth, role, interval) place it."""
    if channel is None or doc.authors_note.text.strip():
        return doc
    stored = group_selectors.authors_note(server_id, channel)
    if not stored:
        return doc
    return replace(doc, authors_note=replace(doc.authors_note, text=stored))


def _channel_group_turn(
    server_id: int, doc: BucketDocument, channel: int | None, parent_channel: int | None
) -> tuple[BucketDocument, str]:
    """A channel that uses a group, for a document without `group` (docs/groups.md): the turn of the
    member the document names as `names.char`; when it names none, the server's character answers
    and the returned sentence says why."""
    if doc.group is not None or channel is None:
        return doc, ""
    name = group_selectors.channel_group(server_id, channel, parent_channel)
    if name is None:
        return doc, ""
    loaded = group_selectors.loaded_group(server_id, name)
    if loaded is not None and loaded.group.member(doc.char_name) is not None:
        return replace(doc, group=GroupTurn(name=name, speaker=doc.char_name)), ""
    return doc, (
        f"This channel uses the group “{name}”, but the document names no member as `names.char` "
        "and has no `group`: the server's character answered."
    )


def _with_card_book(books: tuple[CompiledBook, ...], card: Card | None) -> tuple[CompiledBook, ...]:
    """The server's active lorebooks, and the active card's own book as the character book
    (docs/worldinfo.md#books-and-settings)."""
    book = card_book(card)
    return books if book is None else (book, *books)


def generation_for(server_id: int, preset: CompiledPreset | None, provider: str | None) -> GenerationSettings:
    """The sampler parameters under the server's sampling choice (cached: no SQL once warm), for the
    requested provider, else for the server's own."""
    choice = sampling_cache.get_sampling_choice(server_id)
    target = (
        provider if provider in PROVIDERS else choice.provider if choice.provider in PROVIDERS else "openai"
    )
    return generation_settings(choice.effective(preset.sampling if preset is not None else None), target)


def world_info_channel(doc: BucketDocument, channel: int | None = None) -> str | None:
    """The channel whose World Info timed state the request reads and stores
    (docs/worldinfo.md#timed-effects): the one the
    request names, else the document's `stm_context.channel`."""
    if channel is not None:
        return str(channel)
    context = doc.stm_context
    channel = getattr(context, "channel", None) if context is not None else None
    return str(channel) if channel not in (None, "") else None


def group_preview(server_id: int, doc: BucketDocument, seed: int) -> GroupPreview | None:
    """The preview's view of the document's group turn (None without one, or for an unknown group)."""
    turn = doc.group
    loaded = group_selectors.loaded_group(server_id, turn.name) if turn is not None else None
    if turn is None or loaded is None:
        return None
    lines = [ChatLine(role=m.role, name=m.name, content=m.content) for m in doc.history]
    context = doc.stm_context
    channel = getattr(context, "channel", None) if context is not None else None
    member_id = loaded.id_of(turn.speaker)
    note = (  # as group_turn passes it
        group_selectors.member_note(server_id, int(channel), member_id)
        if channel and member_id and turn.scenario_override is None
        else None
    )
    return GroupPreview(
        name=loaded.group.name,
        speaker=turn.speaker,
        mode=loaded.group.mode,
        strategy=loaded.group.strategy,
        members=tuple((m.name, m.muted) for m in loaded.group.members),
        next_speakers=tuple(next_speakers(loaded.group, lines, seed)),
        note=note or "",
        authors_note=(
            group_selectors.authors_note(server_id, int(channel))
            if channel and not doc.authors_note.text.strip()
            else ""
        ),
        tools=TOOL_NAMES if doc.group_tools else (),
    )
