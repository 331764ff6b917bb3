"""The group form as posted from the Groups page (no JavaScript needed): one row per server card
with a "member" box, a position and a "muted" box; the members are the ticked cards ordered by
their position (then by the card list's order)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.http import QueryDict

from .models import MODE_CHOICES, STRATEGY_CHOICES


@dataclass(frozen=True, slots=True)
class CardChoice:
    """One of the server's cards as the form shows it."""

    card_id: int
    name: str
    has_avatar: bool
    member: bool = False
    position: int = 0
    muted: bool = False


@dataclass(slots=True)
class GroupForm:
    name: str = ""
    mode: str = "swap"
    join_prefix: str = ""
    join_suffix: str = ""
    strategy: str = "natural"
    allow_self_responses: bool = False
    cards: list[CardChoice] = field(default_factory=list)
    modes: list[tuple[str, str]] = field(default_factory=lambda: list(MODE_CHOICES))
    strategies: list[tuple[str, str]] = field(default_factory=lambda: list(STRATEGY_CHOICES))
    # what the post asked for that is not one of the server's cards (a stale page, another server's id)
    unknown_cards: bool = False

    @property
    def members(self) -> list[str]:
        chosen = [c for c in self.cards if c.member]
        return [c.name for c in sorted(chosen, key=lambda c: c.position)]

    @property
    def muted(self) -> list[str]:
        """Every card ticked muted, members or not: the service refuses a muted non-member, naming it."""
        return [c.name for c in self.cards if c.muted]


def blank_form(cards: list[Any], avatars: set[int]) -> GroupForm:
    """An empty form listing the server's cards (`avatars`: the ids of those with an image)."""
    return GroupForm(cards=[CardChoice(card_id=c.pk, name=c.name, has_avatar=c.pk in avatars) for c in cards])


def form_for_group(group: Any, members: list[Any], cards: list[Any], avatars: set[int]) -> GroupForm:
    """The form filled from a stored group (`members`: its member rows in order)."""
    place = {m.card_id: (index + 1, m.muted) for index, m in enumerate(members)}
    choices = []
    for c in cards:
        position, muted = place.get(c.pk, (0, False))
        choices.append(
            CardChoice(c.pk, c.name, c.pk in avatars, member=c.pk in place, position=position, muted=muted)
        )
    choices.sort(key=lambda c: (not c.member, c.position))
    return GroupForm(
        name=group.name,
        mode=group.mode,
        join_prefix=group.join_prefix,
        join_suffix=group.join_suffix,
        strategy=group.strategy,
        allow_self_responses=group.allow_self_responses,
        cards=choices,
    )


def read_form(post: QueryDict, cards: list[Any], avatars: set[int]) -> GroupForm:
    """The posted form (fields the services check are kept as typed, to show them again)."""
    choices = []
    for index, c in enumerate(cards):
        position = str(post.get(f"position-{c.pk}", "")).strip()
        choices.append(
            CardChoice(
                card_id=c.pk,
                name=c.name,
                has_avatar=c.pk in avatars,
                member=post.get(f"member-{c.pk}") == "on",
                position=int(position) if position.isdigit() and len(position) < 6 else 1000 + index,
                muted=post.get(f"muted-{c.pk}") == "on",
            )
        )
    known = {f"{kind}-{c.pk}" for c in cards for kind in ("member", "position", "muted")}
    posted = [key for key in post if key.startswith(("member-", "position-", "muted-"))]
    return GroupForm(
        unknown_cards=any(key not in known for key in posted),
        name=str(post.get("name", ""))[:200],
        mode=str(post.get("mode", "swap")),
        join_prefix=str(post.get("join_prefix", "")).replace("\r\n", "\n"),
        join_suffix=str(post.get("join_suffix", "")).replace("\r\n", "\n"),
        strategy=str(post.get("strategy", "natural")),
        allow_self_responses=post.get("allow_self_responses") == "on",
        cards=choices,
    )
