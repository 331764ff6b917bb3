"""Servers: sign-in, the role table, API tokens and the audit log."""

from __future__ import annotations

import pytest
from django.urls import reverse

from servers.models import AuditEvent
from servers.permissions import ROLE_TABLE, Action, user_can

pytestmark = pytest.mark.django_db


def test_alice_sees_the_lantern_guild_on_her_home_page(client, alice):
    client.force_login(alice)
    response = client.get(reverse("servers:home"))
    assert b"The Lantern Guild" in response.content


def test_charlie_gets_404_for_every_lantern_page(client, charlie, lantern):
    client.force_login(charlie)
    for name in ["servers:server", "servers:tokens", "servers:audit"]:
        assert client.get(reverse(name, args=[lantern.id])).status_code == 404


def test_bob_cannot_manage_api_tokens(client, bob, lantern):
    client.force_login(bob)
    assert client.get(reverse("servers:tokens", args=[lantern.id])).status_code == 403
    assert client.post(reverse("servers:tokens", args=[lantern.id]), {"name": "x"}).status_code == 403


def test_anonymous_visitors_are_sent_to_sign_in(client, lantern):
    response = client.get(reverse("servers:server", args=[lantern.id]))
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_the_role_table_matches_the_spec(alice, bob, carol, lantern):
    spec = {
        Action.MANAGE_PRESETS: {"alice"},
        Action.MANAGE_TOKENS: {"alice"},
        Action.MANAGE_PRIVACY: {"alice", "bob"},
        Action.EDIT_SAMPLES: {"alice", "carol"},
        Action.READ_PRESETS: {"alice", "bob", "carol"},
        Action.REVIEW_STM: {"alice", "bob", "carol"},
        Action.VIEW_PREVIEW: {"alice", "bob", "carol"},
    }
    for action, allowed in spec.items():
        assert {u.username for u in (alice, bob, carol) if user_can(u, lantern, action)} == allowed, action
    assert set(ROLE_TABLE) == set(Action)


def test_superusers_may_do_everything_everywhere(superuser, harbor):
    assert all(user_can(superuser, harbor, action) for action in Action)


def test_alice_creates_a_token_that_is_shown_once_and_stored_hashed(client, alice, lantern):
    client.force_login(alice)
    response = client.post(reverse("servers:tokens", args=[lantern.id]), {"name": "tomori"})
    token = response.context["new_token"]
    assert token.startswith("tk_")
    stored = lantern.api_tokens.get()
    assert stored.digest != token and token not in stored.digest
    assert token not in client.get(reverse("servers:tokens", args=[lantern.id])).content.decode()
    assert AuditEvent.objects.filter(server=lantern, action="token.create", actor=alice).exists()


def test_alice_revokes_a_token_and_the_audit_page_says_so(client, alice, carol, lantern, api_token):
    client.force_login(alice)
    token = lantern.api_tokens.get()
    client.post(reverse("servers:token-revoke", args=[lantern.id, token.id]), {"confirmed": "1"})
    token.refresh_from_db()
    assert token.revoked_at is not None
    client.force_login(carol)
    page = client.get(reverse("servers:audit", args=[lantern.id])).content.decode()
    assert "token.revoke" in page and "alice" in page


def test_pages_carry_a_csp_without_inline_scripts(client, alice, lantern):
    client.force_login(alice)
    csp = client.get(reverse("servers:server", args=[lantern.id])).headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp


def test_a_burst_of_wrong_passwords_locks_the_account_for_a_while(client, alice, settings):
    settings.LOGIN_ATTEMPTS_PER_15_MINUTES = 3
    for _ in range(3):
        client.post(reverse("login"), {"username": "alice", "password": "nope"})
    response = client.post(reverse("login"), {"username": "alice", "password": "correct horse battery"})
    assert response.status_code == 200
    assert b"Too many failed sign-ins" in response.content
    assert "_auth_user_id" not in client.session


def test_revoking_a_token_asks_first_and_says_the_bot_loses_access(client, alice, lantern):
    from servers.models import ApiToken
    from servers.services import api_token_create

    token, _ = api_token_create(server=lantern, name="bot", by=alice)
    client.force_login(alice)
    asked = client.post(reverse("servers:token-revoke", args=[lantern.id, token.id])).content.decode()
    assert "Revoke the token “bot”?" in asked and "loses access at once" in asked
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None
