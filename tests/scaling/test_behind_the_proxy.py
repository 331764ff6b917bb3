"""What a web process behind the reverse proxy must get right on its own: its health answer and the
client address it counts sign-in failures against."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_the_health_check_answers_ok_for_any_host_without_a_session(client):
    response = client.get("/healthz", HTTP_HOST="10.0.3.7:8000")  # a container address, not an allowed host
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "cache": "ok"}
    assert "sessionid" not in response.cookies


def _fail_sign_in(client, username: str, forwarded_for: str) -> None:
    client.post(
        reverse("login"), {"username": username, "password": "nope"}, HTTP_X_FORWARDED_FOR=forwarded_for
    )


def test_behind_the_proxy_one_address_failing_sign_ins_does_not_lock_out_alice_elsewhere(
    client, alice, settings
):
    settings.BEHIND_PROXY = True
    settings.LOGIN_ATTEMPTS_PER_15_MINUTES = 3
    settings.LOGIN_ATTEMPTS_PER_ADDRESS_PER_15_MINUTES = 3
    for name in ("mallory", "trudy", "eve"):  # three usernames, one address: only the address counts
        _fail_sign_in(client, name, "203.0.113.5")
    response = client.post(
        reverse("login"),
        {"username": "alice", "password": "correct horse battery"},
        HTTP_X_FORWARDED_FOR="198.51.100.7",
    )
    assert response.status_code == 302


def test_behind_the_proxy_the_failing_address_is_locked_out_even_when_it_forges_the_header(
    client, alice, settings
):
    settings.BEHIND_PROXY = True
    settings.LOGIN_ATTEMPTS_PER_15_MINUTES = 3
    settings.LOGIN_ATTEMPTS_PER_ADDRESS_PER_15_MINUTES = 3
    for name in ("mallory", "trudy", "eve"):
        _fail_sign_in(client, name, "203.0.113.5")
    # The proxy appends the real address; whatever the client wrote before it is ignored.
    response = client.post(
        reverse("login"),
        {"username": "alice", "password": "correct horse battery"},
        HTTP_X_FORWARDED_FOR="198.51.100.7, 203.0.113.5",
    )
    assert response.status_code == 200
    assert b"Too many failed sign-ins" in response.content
