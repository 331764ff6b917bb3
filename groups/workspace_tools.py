"""The shared-workspace tools the groups app carries out (docs/groups.md#a-shared-workspace),
added to the channel tool route's registry (`servers.channel_tools.CHANNEL_TOOLS`) from
`GroupsConfig.ready()`:

- `set_author_note` {text}: the channel's Author's Note (≤ 1 500 characters; blank removes it);
- `roll_dice` {formula, seed?}: SillyTavern's dice notation rolled by the server with the engine's
  seeded source (the `{{roll}}` macro's parser and draws); the answer carries the seed, so the same
  seed gives the same dice;
- `add_agent_context` {member, text}: a system message kept in the channel's stored conversation
  that only that member's prompts receive (docs/channels.md#private-context); the member must be one
  of the channel's group.
"""

from __future__ import annotations

import secrets
from typing import Any

from conversations.channels import selectors as channel_selectors
from conversations.channels import services as channel_services
from engine.groups import AGENT_CONTEXT_MAX_CHARS, AUTHORS_NOTE_MAX_CHARS, DICE_FORMULA_MAX_CHARS
from engine.macros import MAX_DICE, MAX_SIDES, parse_roll, roll_each, stream_for
from servers import selectors as server_selectors
from servers.channel_tools import ChannelTool, ToolCall

from . import selectors, services

MAX_SEED = 2**63 - 1
ROLL_KIND = 2  # the {{roll}} macro's draw kind (engine/macros/handlers.py)


def set_author_note(call: ToolCall) -> dict[str, Any]:
    text = call.arguments.get("text")
    if not isinstance(text, str):
        raise services.GroupError("`text` must be text (empty removes the Author's Note).")
    if len(text) > AUTHORS_NOTE_MAX_CHARS:
        raise services.GroupError(f"`text` has at most {AUTHORS_NOTE_MAX_CHARS} characters.")
    kept = services.authors_note_set(server=call.server_id, channel_id=call.channel_id, text=text, by=call.by)
    return {"authors_note": text if kept else "", "channel": str(call.channel_id)}


def roll_dice(call: ToolCall) -> dict[str, Any]:
    formula = call.arguments.get("formula")
    if isinstance(formula, int) and not isinstance(formula, bool):
        formula = str(formula)  # a bare number is one die of that many sides
    if not isinstance(formula, str) or not formula.strip():
        raise services.GroupError("`formula` must be dice notation such as 2d6+1.")
    if len(formula) > DICE_FORMULA_MAX_CHARS:
        raise services.GroupError(f"`formula` has at most {DICE_FORMULA_MAX_CHARS} characters.")
    spec = parse_roll(formula)
    if spec is None:
        raise services.GroupError(
            f"“{formula.strip()}” is not dice notation: write XdY, XdY+Z, XdY-Z, dY or a number N (one die of N sides)."
        )
    if spec.problem:  # the macro clamps and warns; a tool answer must be the dice asked for, or a refusal
        raise services.GroupError(
            f"“{formula.strip()}” asks for more than the server rolls: at most {MAX_DICE} dice of at most "
            f"{MAX_SIDES} sides."
        )
    seed = call.arguments.get("seed")
    if seed is None:
        seed = secrets.randbelow(MAX_SEED + 1)
    elif isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise services.GroupError("`seed` must be a whole number from 0 to 2^63 - 1.")
    rolls = roll_each(spec, stream_for(seed, ROLL_KIND))
    total = sum(rolls) + spec.modifier
    shown = f"{spec.dice}d{spec.sides}" + (f"{spec.modifier:+d}" if spec.modifier else "")
    services.dice_roll_record(
        server_id=call.server_id,
        channel_id=call.channel_id,
        formula=shown,
        rolls=rolls,
        total=total,
        by=call.by,
    )
    return {"formula": shown, "rolls": rolls, "modifier": spec.modifier, "total": total, "seed": seed}


def add_agent_context(call: ToolCall) -> dict[str, Any]:
    member, text = call.arguments.get("member"), call.arguments.get("text")
    if isinstance(member, bool) or not isinstance(member, str | int):
        raise services.GroupError("`member` must be a member's id (or name), as list_group_members gives it.")
    if not isinstance(text, str) or not text.strip():
        raise services.GroupError("`text` must be the context to keep for that member.")
    if len(text) > AGENT_CONTEXT_MAX_CHARS:
        raise services.GroupError(f"`text` has at most {AGENT_CONTEXT_MAX_CHARS} characters.")
    conversation = channel_selectors.conversation_for(call.server_id, call.channel_id)
    if conversation is None:
        raise services.GroupError(
            "This server stores no conversation for that channel: there is nowhere to keep it."
        )
    parent = server_selectors.channel_parent(call.server_id, call.channel_id)
    group_name = selectors.channel_group(call.server_id, call.channel_id, parent)
    loaded = None if group_name is None else selectors.loaded_group(call.server_id, group_name)
    if loaded is None:
        raise services.GroupError(
            "This channel has no group: a private context is kept for a member of its group."
        )
    member_id, name = services.member_of(loaded, member)
    message = channel_services.private_context_add(
        server_id=call.server_id, channel_id=call.channel_id, member=name, text=text, by=call.by
    )
    return {"kept": True, "member": {"id": member_id, "name": name}, "id": str(message.discord_id)}


TOOLS = (
    ChannelTool(name="set_author_note", fields=("text",), run=set_author_note),
    ChannelTool(name="roll_dice", fields=("formula", "seed"), run=roll_dice),
    ChannelTool(name="add_agent_context", fields=("member", "text"), run=add_agent_context),
)
