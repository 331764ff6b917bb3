"""Every page and API call counts toward its server's share of a web process (issue 35, item 2).

Charlie (Harbor Hall's admin) spends Harbor's share; the Lantern Guild's pages and bot keep theirs.
The CPU share is made tiny here so that one real preview render of Harbor's empties its bucket. The
meter refuses a server only when a neighbour asked the process lately (issue 50, item 10): a server
alone is served, however much it uses.
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from core import fairness
from core.actors import SYSTEM
from tests.security.conftest import DEFAULT_BUCKETS


@pytest.fixture
def tiny_cpu_share(settings):
    settings.SERVER_CPU_SHARE = 0.0001  # CPU-seconds earned back per second: nothing, in a test
    settings.SERVER_CPU_BURST_SECONDS = 0.002
    settings.SERVER_CPU_NEIGHBOUR_SECONDS = 3600  # a neighbour stays one for the whole test
    fairness._credit.clear()
    fairness._seen.clear()
    yield
    fairness._credit.clear()
    fairness._seen.clear()


def render(client, server_id: int):
    document = DEFAULT_BUCKETS.read_text(encoding="utf-8")
    return client.post(
        reverse("assembly:preview-render", args=[server_id]), {"document": document}, HTTP_HX_REQUEST="true"
    )


def assemble(client, server_id: int, token: str):
    return client.post(
        f"/api/v1/servers/{server_id}/assemble",
        data=DEFAULT_BUCKETS.read_text(encoding="utf-8"),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def test_harbor_spending_its_share_gets_a_busy_page_while_the_lantern_carries_on(
    tiny_cpu_share, client, alice, charlie, lantern, harbor, api_token, harbor_token
):
    fairness._enter(lantern.pk, counted=False)  # the Lantern asked this process lately: a neighbour
    client.force_login(charlie)
    assert render(client, harbor.pk).status_code == 200  # the render that empties Harbor's bucket
    busy = client.get(reverse("regex_scripts:tester", args=[harbor.pk]))
    assert busy.status_code == 429 and busy["Retry-After"] == "1"
    assert "busy, try again" in busy.content.decode()
    refused = assemble(client, harbor.pk, harbor_token)
    assert refused.status_code == 429 and "retry in 1 s" in json.loads(refused.content)["error"]

    client.force_login(alice)
    assert render(client, lantern.pk).status_code == 200
    assert assemble(client, lantern.pk, api_token).status_code in (200, 429)  # Lantern's own share


def test_the_lanterns_bot_alone_is_served_past_its_cpu_share_until_harbor_asks_too(
    tiny_cpu_share, client, lantern, harbor, api_token, harbor_token
):
    for _ in range(5):  # each assembly uses more than the whole bucket: alone, the Lantern is served
        assert assemble(client, lantern.pk, api_token).status_code == 200
    assert assemble(client, harbor.pk, harbor_token).status_code == 200  # a neighbour arrives
    refused = assemble(client, lantern.pk, api_token)
    assert refused.status_code == 429 and "share of the processor" in json.loads(refused.content)["error"]


def test_charlies_requests_to_the_lanterns_pages_do_not_spend_the_lanterns_share(
    tiny_cpu_share, client, alice, charlie, lantern, harbor
):
    client.force_login(charlie)
    for _ in range(5):
        assert render(client, lantern.pk).status_code == 404
    client.force_login(alice)
    assert render(client, lantern.pk).status_code == 200


def test_a_servers_concurrent_requests_past_the_limit_are_refused(settings, lantern):
    settings.SERVER_CONCURRENT_WORK_PER_PROCESS = 2
    token = fairness._claims.set([])
    try:
        fairness.claim_share(lantern.pk)
        other = fairness._claims.set([])
        fairness.claim_share(lantern.pk)
        third = fairness._claims.set([])
        with pytest.raises(fairness.ServerBusy):
            fairness.claim_share(lantern.pk)
        fairness._claims.reset(third)
        fairness._claims.reset(other)
    finally:
        fairness._claims.reset(token)
        fairness._running.clear()


def test_a_pages_card_images_load_while_the_servers_places_are_taken(settings, client, alice, lantern):
    from characters import services as card_services
    from engine.cards import Card, card_png

    raw = card_png(Card(spec="chara_card_v2", name="Mira", description="Mira keeps the lighthouse."))
    row = card_services.card_import(
        server=lantern, raw=raw, filename="mira.png", activate=False, by=SYSTEM
    ).row
    client.force_login(alice)
    settings.SERVER_CONCURRENT_WORK_PER_PROCESS = 2
    fairness._running[lantern.pk] = 2  # two of the Lantern's requests are running in this process
    try:
        image = client.get(reverse("characters:avatar", args=[lantern.pk, row.pk]))
        page = client.get(reverse("characters:list", args=[lantern.pk]))
    finally:
        fairness._running.clear()
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    assert page.status_code == 429 and "busy" in page.content.decode().lower()
