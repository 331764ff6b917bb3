"""The group nudge (docs/groups.md): the preset's `group_nudge_prompt`, rendered, a system message at
the end of the chat-history block (after the last message and the depth-0 injections, before what
the preset puts after `chatHistory`). None when it renders empty, for an impersonation, or when the
preset sends no chat. A preset node with the identifier `groupNudge` lends its role when enabled,
and when it is in-chat at depth D the nudge is sent at D as well; its own text is never sent.
Squash never joins the nudge with a neighbour."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..parts import Item, Part, Source, setting_source
from ..vocabulary import ROLES

if TYPE_CHECKING:
    from ..compiled import CompiledPreset
    from .rearrange import Arrangement, Plan

NUDGE_ID = "groupNudge"
NO_NUDGE = ("impersonate",)  # the generation types that send none
IN_CHAT = 1  # a node's injection_position for in-chat at a depth


def nudge_node_at(preset: CompiledPreset, plan: Plan) -> int | None:
    """The position of the enabled `groupNudge` node of the preset's order, or None."""
    for index, compiled in enumerate(preset.nodes):
        if compiled.node.identifier == NUDGE_ID and plan.active[index]:
            return index
    return None


@dataclass(frozen=True, slots=True)
class InChatNudge:
    """Where the preset's `groupNudge` node puts a copy of the nudge in the chat."""

    depth: int
    order: int
    index: int  # the node's position in the preset


def group_nudge(
    text: str, preset: CompiledPreset, plan: Plan, generation_type: str
) -> tuple[Item | None, InChatNudge | None]:
    """The nudge for the end of the history, and where its in-chat copy goes when the preset's node
    asks for one (either None)."""
    sends_chat = plan.history_at is not None and plan.active[plan.history_at]
    if not text.strip() or generation_type in NO_NUDGE or not sends_chat:
        return None, None
    at = nudge_node_at(preset, plan)
    node = preset.nodes[at].node if at is not None else None
    role = node.role if node is not None and node.role in ROLES else "system"
    source = setting_source("group_nudge_prompt")
    item = Item("", role, (Part(text, (source,), True),), squash=False)
    if node is None or node.injection_position != IN_CHAT:
        return item, None
    return item, InChatNudge(max(0, node.injection_depth), node.injection_order, at or 0)


def without_node_text(arrangement: Arrangement) -> None:
    """The `groupNudge` node's own text taken out of the arrangement (SillyTavern sends the
    `group_nudge_prompt` in its place)."""

    def from_node(sources: tuple[Source, ...]) -> bool:
        return bool(sources) and all(s.kind == "node" and s.identifier == NUDGE_ID for s in sources)

    arrangement.injections[:] = [i for i in arrangement.injections if not from_node((i.source,))]
    for run in (arrangement.before, arrangement.after):
        run[:] = [item for item in run if not from_node(tuple(s for p in item.parts for s in p.sources))]
