"""An operator creates and revokes bot tokens from the command line (issue 25), audited like the page."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from servers.models import AuditEvent


def token(*args: str) -> dict:
    out = io.StringIO()
    call_command("token", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def entries(client, server, plain):
    return client.get(f"/api/v1/servers/{server.pk}/stm/entries", HTTP_AUTHORIZATION=f"Bearer {plain}")


def test_a_token_made_on_the_command_line_works_on_its_server_only_until_revoked(
    client, lantern, harbor, django_capture_on_commit_callbacks
):
    created = token("create", "--server", str(lantern.pk), "--name", "night bot")
    assert set(created) == {"token", "name"}
    assert created["name"] == "night bot"
    assert entries(client, lantern, created["token"]).status_code == 200
    assert entries(client, harbor, created["token"]).status_code == 404
    with django_capture_on_commit_callbacks(execute=True):
        revoked = token("revoke", "--server", str(lantern.pk), "--name", "night bot")
    assert revoked == {"name": "night bot", "revoked": 1}
    assert entries(client, lantern, created["token"]).status_code == 401
    audit = list(AuditEvent.objects.filter(server=lantern).values_list("actor_label", "action"))
    assert ("cli", "token.create") in audit
    assert ("cli", "token.revoke") in audit


def test_charlies_token_name_on_harbor_cannot_revoke_the_lanterns_token(lantern, harbor):
    token("create", "--server", str(lantern.pk), "--name", "bot")
    with pytest.raises(CommandError, match="no live token named 'bot'"):
        call_command("token", "revoke", "--server", str(harbor.pk), "--name", "bot", "--json")


def test_an_unknown_server_is_an_error(db):
    with pytest.raises(CommandError, match="No server 999"):
        call_command("token", "create", "--server", "999", "--name", "bot", "--json")
