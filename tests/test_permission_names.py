"""Each kind of content has its own read and manage actions, and each is granted to the roles the
role table of docs/presets.md#who-may-do-what names: every member reads, only admins change."""

from __future__ import annotations

import pytest

from servers.permissions import Action, user_can

pytestmark = pytest.mark.django_db

EVERY_MEMBER = {"alice", "bob", "carol"}  # admin, moderator, support
ADMINS = {"alice"}


def stable_id(value: object) -> str:
    """The same id in every process (a set's order is not): parallel runs collect by id."""
    return "+".join(sorted(value)) if isinstance(value, set) else str(value)


@pytest.mark.parametrize(
    ("action", "allowed"),
    [
        (Action.READ_SERVER, EVERY_MEMBER),
        (Action.READ_CARDS, EVERY_MEMBER),
        (Action.MANAGE_CARDS, ADMINS),
        (Action.READ_LOREBOOKS, EVERY_MEMBER),
        (Action.MANAGE_LOREBOOKS, ADMINS),
        (Action.READ_REGEX, EVERY_MEMBER),
        (Action.MANAGE_REGEX, ADMINS),
        (Action.READ_GROUPS, EVERY_MEMBER),
        (Action.MANAGE_GROUPS, ADMINS),
        (Action.READ_SAMPLING, EVERY_MEMBER),
        (Action.MANAGE_SAMPLING, ADMINS),
    ],
    ids=stable_id,
)
def test_each_content_action_is_granted_to_the_roles_the_table_names(
    action, allowed, alice, bob, carol, lantern
):
    assert {u.username for u in (alice, bob, carol) if user_can(u, lantern, action)} == allowed


@pytest.mark.parametrize(
    ("read", "manage"),
    [
        (Action.READ_CARDS, Action.MANAGE_CARDS),
        (Action.READ_LOREBOOKS, Action.MANAGE_LOREBOOKS),
        (Action.READ_REGEX, Action.MANAGE_REGEX),
        (Action.READ_GROUPS, Action.MANAGE_GROUPS),
    ],
    ids=str,
)
def test_cards_lorebooks_regex_and_groups_are_guarded_as_presets_were(
    read, manage, alice, bob, carol, lantern
):
    for user in (alice, bob, carol):
        assert user_can(user, lantern, read) == user_can(user, lantern, Action.READ_PRESETS), (user, read)
        assert user_can(user, lantern, manage) == user_can(user, lantern, Action.MANAGE_PRESETS), (
            user,
            manage,
        )
