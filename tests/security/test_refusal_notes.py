"""A browser refused a moment ago is refused again before its session is read (issue 50, item 2;
docs/reliability.md#the-refusals-remembered-item-2).

Past its account's rate, or past its server's share of the process, a browser that retries at once
used to cost the dashboard its session, its account and its membership read again for every 429.
The process now remembers, per session, what it was refused for: the account (until the account's
bucket holds a request again) or the server (for as long as the share refuses for certain). Other
browsers, and the same browser's pages of other servers, are served as before.
"""

from __future__ import annotations

import logging
import time

import pytest
from django.test import Client
from django.urls import reverse

from core import client_rate, fairness
from core.actors import SYSTEM
from servers.models import Role
from servers.services import membership_set
from tests.security.conftest import DEFAULT_BUCKETS


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def one_account_burst(settings):
    settings.ACCOUNT_BURST = 3
    settings.ACCOUNT_REQUESTS_PER_SECOND = 0.001  # no refill within a test, unless it asks for one
    return settings


@pytest.fixture
def tiny_cpu_share(settings):
    settings.SERVER_CPU_SHARE = 0.0001  # nothing earned back within a test
    settings.SERVER_CPU_BURST_SECONDS = 0.002
    settings.SERVER_CPU_NEIGHBOUR_SECONDS = 3600
    fairness._credit.clear()
    fairness._seen.clear()
    yield settings
    fairness._credit.clear()
    fairness._seen.clear()


def test_alices_browser_refused_for_her_account_is_answered_without_a_query_next_time(
    one_account_burst, alice, lantern, django_assert_num_queries
):
    browser = signed_in(alice)
    page = reverse("servers:server", args=[lantern.id])
    assert [browser.get(page).status_code for _ in range(4)] == [200, 200, 200, 429]

    with django_assert_num_queries(0):
        again = browser.get(page)

    assert again.status_code == 429 and again["Retry-After"] == "1"


def test_bob_is_served_while_alices_refused_browser_is_answered_early(one_account_burst, alice, bob, lantern):
    alices = signed_in(alice)
    page = reverse("servers:server", args=[lantern.id])
    for _ in range(5):
        alices.get(page)
    assert alices.get(page).status_code == 429
    assert signed_in(bob).get(page).status_code == 200


def test_alices_browser_is_served_again_once_her_account_refills(one_account_burst, alice, lantern):
    browser = signed_in(alice)
    page = reverse("servers:server", args=[lantern.id])
    assert [browser.get(page).status_code for _ in range(4)] == [200, 200, 200, 429]
    one_account_burst.ACCOUNT_REQUESTS_PER_SECOND = 10.0  # 0.3 s: three requests' worth
    time.sleep(0.3)
    assert browser.get(page).status_code == 200


def test_charlies_browser_refused_by_harbors_share_is_answered_early_for_harbor_only(
    tiny_cpu_share, charlie, lantern, harbor, django_assert_num_queries
):
    membership_set(server=lantern, user=charlie, role=Role.MODERATOR, by=SYSTEM)
    fairness._enter(lantern.pk, counted=False)  # a neighbour asked the process lately: the meter applies
    browser = signed_in(charlie)
    render = browser.post(
        reverse("assembly:preview-render", args=[harbor.pk]),
        {"document": DEFAULT_BUCKETS.read_text(encoding="utf-8")},
        HTTP_HX_REQUEST="true",
    )
    assert render.status_code == 200  # the render that empties Harbor's bucket
    tester = reverse("regex_scripts:tester", args=[harbor.pk])
    assert browser.get(tester).status_code == 429  # the share itself, after the session was read

    with django_assert_num_queries(0):
        again = browser.get(tester)

    assert again.status_code == 429
    # His page of the Lantern (the first to spend the Lantern's share) is served.
    assert browser.get(reverse("servers:server", args=[lantern.id])).status_code == 200


def test_harbors_refusal_is_read_again_once_it_has_held_its_second(tiny_cpu_share, charlie, lantern, harbor):
    fairness._enter(lantern.pk, counted=False)
    browser = signed_in(charlie)
    browser.post(
        reverse("assembly:preview-render", args=[harbor.pk]),
        {"document": DEFAULT_BUCKETS.read_text(encoding="utf-8")},
        HTTP_HX_REQUEST="true",
    )
    tester = reverse("regex_scripts:tester", args=[harbor.pk])
    assert browser.get(tester).status_code == 429
    time.sleep(client_rate.RETRY_AFTER_SECONDS + 0.05)
    tiny_cpu_share.SERVER_CPU_SHARE = 1000.0  # Harbor's bucket refills at once: served again
    assert browser.get(tester).status_code == 200


def test_a_browser_refused_fifty_times_leaves_one_summary_line_not_fifty(
    one_account_burst, alice, lantern, caplog, monkeypatch
):
    summary = client_rate._RefusalLog(every=3600.0)  # nothing counted yet, no line due
    monkeypatch.setattr(client_rate, "_refusal_log", summary)
    browser = signed_in(alice)
    page = reverse("servers:server", args=[lantern.id])
    with caplog.at_level(logging.WARNING):
        answers = [browser.get(page).status_code for _ in range(53)]
        assert answers.count(429) == 50
        assert not [r for r in caplog.records if "Too Many Requests" in r.getMessage()]
        summary.every = 0.0
        browser.get(page)
    summaries = [r.getMessage() for r in caplog.records if r.name == "tavernkeep.refusals"]
    assert summaries and summaries[-1].startswith("51 page requests answered 429")
