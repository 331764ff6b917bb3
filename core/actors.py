"""Who made a change, as one value: a dashboard user, or an `Agent` that is not one (the bot's API
token, the command line, demo data, the system). Services take `by: Actor`; the audit log and a
preset's history store the user (when there is one) and the label that names the actor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from django.contrib.auth.models import User


@dataclass(frozen=True, slots=True)
class Agent:
    """An actor that is not a dashboard user; `label` is what the audit log shows for it."""

    label: str


Actor: TypeAlias = User | Agent

SYSTEM = Agent("system")
CLI = Agent("cli")
DEMO = Agent("demo data")


def user_of(actor: Actor) -> User | None:
    """The signed-in user behind the actor, or None for an agent."""
    return actor if isinstance(actor, User) and actor.is_authenticated else None


def label_of(actor: Actor) -> str:
    """The name the audit log keeps for the actor (cut to its 150-character column)."""
    if isinstance(actor, Agent):
        return actor.label[:150]
    user = user_of(actor)
    return user.get_username()[:150] if user is not None else SYSTEM.label


def token_agent_for(token: str) -> Agent:
    """The bot, as every write it makes through its API token is recorded: 'api token <prefix>'
    (the token's first ten characters, its stored prefix; never the rest)."""
    return Agent(f"api token {token[:10]}")
