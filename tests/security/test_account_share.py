"""The dashboard's share per account (issue 50, item 2): signing in thirty times used to give an
account thirty browsers' worth of requests. An account holds at most SESSIONS_PER_ACCOUNT sessions
(a new sign-in ends the oldest), and its requests are metered across its sessions."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from servers.models import AccountSession


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_account_signed_in_again_and_again_keeps_only_its_newest_sessions(settings, bob, lantern):
    settings.SESSIONS_PER_ACCOUNT = 5
    page = reverse("servers:server", args=[lantern.id])
    browsers = [signed_in(bob) for _ in range(7)]
    answers = [browser.get(page).status_code for browser in browsers]
    assert answers == [302, 302, 200, 200, 200, 200, 200]  # the two oldest are sent to sign in
    assert AccountSession.objects.filter(user=bob).count() == 5


def test_an_accounts_requests_are_metered_across_its_sessions(settings, alice, bob, lantern):
    settings.ACCOUNT_BURST = 6
    settings.ACCOUNT_REQUESTS_PER_SECOND = 0.001  # no refill within the test
    page = reverse("servers:server", args=[lantern.id])
    browsers = [signed_in(alice) for _ in range(3)]
    answers = [browsers[i % 3].get(page).status_code for i in range(8)]
    assert answers == [200] * 6 + [429, 429]
    assert signed_in(bob).get(page).status_code == 200  # another account is served
