"""One browser that retries the moment it is refused does not spend a web process's time on reading
its session again and again (docs/reliability.md#5c-hostile-neighbours-round-two-issue-35): past a burst,
its requests are answered 429 before the session, the database or a template is read, while other
browsers are served."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from django.urls import reverse


@pytest.fixture
def strict(settings):
    settings.CLIENT_BURST = 5
    settings.CLIENT_REQUESTS_PER_SECOND = 0.001  # no refill within a test, unless it asks for one
    return settings


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_alices_browser_past_its_burst_is_told_to_wait_without_a_query(
    strict, alice, lantern, django_assert_num_queries
):
    browser = signed_in(alice)
    page = reverse("servers:server", args=[lantern.id])
    assert [browser.get(page).status_code for _ in range(5)] == [200] * 5

    with django_assert_num_queries(0):
        refused = browser.get(page)

    assert refused.status_code == 429
    assert refused["Retry-After"] == "1"
    assert "wait a second and try again" in refused.content.decode()


def test_bob_is_served_while_alices_browser_is_refused(strict, alice, bob, lantern):
    alices, bobs = signed_in(alice), signed_in(bob)
    page = reverse("servers:server", args=[lantern.id])
    for _ in range(6):
        alices.get(page)
    assert alices.get(page).status_code == 429
    assert bobs.get(page).status_code == 200


def test_alices_browser_is_served_again_once_its_bucket_refills(strict, alice, lantern):
    browser = signed_in(alice)
    page = reverse("servers:server", args=[lantern.id])
    assert [browser.get(page).status_code for _ in range(6)] == [200] * 5 + [429]
    # Refilled by the clock, not by how fast this machine answers: at 10 a second, 0.3 s is three requests.
    strict.CLIENT_REQUESTS_PER_SECOND = 10.0
    time.sleep(0.3)
    assert browser.get(page).status_code == 200


def test_a_browser_without_a_session_is_left_to_the_sign_in_throttle(strict):
    anonymous = Client()
    assert {anonymous.get(reverse("login")).status_code for _ in range(12)} == {200}
