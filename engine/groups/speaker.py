"""The card a group's speaker is assembled with (docs/groups.md, "The prompt for the speaker").

A group reply is one member's reply: the speaker's name is `{{char}}`, its system prompt and
post-history instructions are the ones sent. What differs is the four card fields (description,
personality, scenario, example messages) and the depth prompts:

- `swap`: the speaker's card alone;
- `join_exclude_muted` / `join_include_muted`: every member's field, in member order, trimmed,
  skipped when empty, wrapped as join prefix + value + join suffix (`<FIELDNAME>` becomes the
  field's label; `{{char}}` there is that member), joined with a newline. Muted members are left out
  of `join_exclude_muted`, except a muted speaker. Depth prompts: every unmuted member's and the
  speaker's, in both join modes.

The chat's scenario and examples overrides replace every member's field (no join, no prefix).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..macros import Speaker, resolve_identity
from .model import Group, GroupMember, GroupTurn

if TYPE_CHECKING:
    from ..buckets import BucketDocument
    from ..cards import Card, DepthPrompt

JOINED = (  # card field, its <FIELDNAME> label
    ("description", "Description"),
    ("personality", "Personality"),
    ("scenario", "Scenario"),
    ("mes_example", "Example Messages"),
)
_FIELDNAME = re.compile("<FIELDNAME>", re.IGNORECASE)
_START = "<START>"


@dataclass(frozen=True, slots=True)
class SpeakerCard:
    """What a group turn changes: the speaker's name (with the group's names for the group macros),
    the card to assemble with, and the depth prompts of the join modes (empty for swap, where the
    card's own depth prompt is the one sent)."""

    name: Speaker
    card: Card
    depth_prompts: tuple[DepthPrompt, ...] = ()


def speaker_card(group: Group, turn: GroupTurn, card: Card | None, *, user: str) -> SpeakerCard:
    """The speaker's card for `turn` in `group`; `card` is the speaker's card when the caller has it
    (else the member's). Raises ValueError when the speaker is not a member."""
    member = group.member(turn.speaker)
    if member is None:
        raise ValueError(f"“{turn.speaker}” is not a member of the group “{group.name}”.")
    card = card if card is not None else member.card
    name = speaker_name(group, turn.speaker)
    overrides = {
        "scenario": (turn.scenario_override or "").strip(),
        "mes_example": (turn.examples_override or "").strip(),
    }
    if group.mode == "swap":
        changes: dict[str, Any] = {key: text for key, text in overrides.items() if text}
        return SpeakerCard(name, replace(card, **changes) if changes else card)
    members = _joined_members(group, turn.speaker)
    joined_changes: dict[str, Any] = {
        key: overrides.get(key) or _joined(group, members, key, label, user) for key, label in JOINED
    }
    joined = replace(card, **joined_changes, depth_prompt=None)
    return SpeakerCard(name, joined, _depth_prompts(group, turn.speaker, user))


def speaker_name(group: Group, speaker: str) -> Speaker:
    """The speaker's name with the group's names: `{{group}}` every member, `{{groupNotMuted}}` the
    unmuted ones (a muted speaker too is left out), `{{notChar}}` the unmuted ones but the speaker."""
    unmuted = [m.name for m in group.members if not m.muted]
    return Speaker(
        speaker,
        group=", ".join(m.name for m in group.members),
        not_muted=", ".join(unmuted),
        others=", ".join(n for n in unmuted if n != speaker),
    )


def _joined_members(group: Group, speaker: str) -> tuple[GroupMember, ...]:
    if group.mode == "join_include_muted":
        return group.members
    return tuple(m for m in group.members if not m.muted or m.name == speaker)


def _joined(group: Group, members: tuple[GroupMember, ...], key: str, label: str, user: str) -> str:
    """One field joined over `members`: each value trimmed, skipped when empty, wrapped in the
    group's prefix and suffix (with `<FIELDNAME>` and that member's `{{char}}`)."""
    out = []
    for member in members:
        value = getattr(member.card, key).strip()
        if not value:
            continue
        if key == "mes_example" and not value.startswith(_START):
            value = f"{_START}\n{value}"
        char = speaker_name(group, member.name)

        def prepared(text: str, *, trim: bool, char: Speaker = char) -> str:
            text = _FIELDNAME.sub(label, text)
            return resolve_identity(text.strip() if trim else text, user=user, char=char)

        text = prepared(group.join_prefix, trim=False)
        text += prepared(value, trim=True) + prepared(group.join_suffix, trim=False)
        if text:
            out.append(text.replace("\r", ""))
    return "\n".join(out)


def _depth_prompts(group: Group, speaker: str, user: str) -> tuple[DepthPrompt, ...]:
    """The join modes' depth prompts: each unmuted member's, and the speaker's, in member order."""
    out = []
    for member in group.members:
        depth = member.card.depth_prompt
        if depth is None or (member.muted and member.name != speaker):
            continue
        text = resolve_identity(depth.prompt.strip(), user=user, char=speaker_name(group, member.name))
        if text:
            out.append(replace(depth, prompt=text.replace("\r", "")))
    return tuple(out)


def group_document(
    doc: BucketDocument, group: Group, card: Card | None
) -> tuple[BucketDocument, SpeakerCard]:
    """`doc` for its group turn: `names.char` is the speaker (with the group's names); and the
    speaker's card. Raises ValueError when the speaker is not a member."""
    assert doc.group is not None
    made = speaker_card(group, doc.group, card, user=doc.user_name)
    return replace(doc, char_name=made.name), made
