"""An outsider who knows alice's username tries to lock her out (issue 25): failed sign-ins count
per (username, address) and per address, never per username alone."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

RIGHT = "correct horse battery"


def sign_in(client: Client, username: str, password: str, address: str):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def test_ten_wrong_passwords_for_alice_from_one_address_do_not_lock_alice_out_at_hers(alice, settings):
    settings.LOGIN_ATTEMPTS_PER_15_MINUTES = 10
    outsider = Client()
    for _ in range(12):
        sign_in(outsider, "alice", "guess", "203.0.113.66")
    assert b"Too many failed sign-ins" in sign_in(outsider, "alice", RIGHT, "203.0.113.66").content
    assert sign_in(Client(), "alice", RIGHT, "198.51.100.7").status_code == 302


def test_one_address_guessing_many_usernames_is_stopped_by_the_address_limit(alice, settings):
    settings.LOGIN_ATTEMPTS_PER_15_MINUTES = 10
    settings.LOGIN_ATTEMPTS_PER_ADDRESS_PER_15_MINUTES = 20
    sprayer = Client()
    for name in [f"user{i}" for i in range(20)]:
        sign_in(sprayer, name, "guess", "203.0.113.66")
    response = sign_in(sprayer, "alice", RIGHT, "203.0.113.66")
    assert b"Too many failed sign-ins" in response.content
    assert "_auth_user_id" not in sprayer.session
    assert sign_in(Client(), "alice", RIGHT, "198.51.100.7").status_code == 302
