"""The node list of a big preset renders with a constant number of queries, a page of 50 nodes at
a time (issue 36: the whole list of a 323-node preset was 0.86 MB of HTML)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from presets import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def big_preset(lantern, alice, big_preset_bytes):
    return services.preset_import(server=lantern, raw=big_preset_bytes, filename="Big.json", by=alice).preset


def test_the_generated_preset_is_big(big_preset_bytes, big_preset):
    assert len(big_preset_bytes) > 1_900_000 and big_preset.node_count >= 500


def test_alice_sees_the_500_node_list_in_at_most_10_queries(
    client, alice, lantern, big_preset, django_assert_max_num_queries
):
    client.force_login(alice)
    url = reverse("presets:detail", args=[lantern.id, big_preset.pk])
    with django_assert_max_num_queries(10):
        response = client.get(url)
    assert response.status_code == 200
    assert len(response.context["nodes"]) == 50
    assert len(response.content) <= 150_000


def test_the_pages_of_the_node_list_show_every_node_once_in_prompt_order(client, alice, lantern, big_preset):
    client.force_login(alice)
    url = reverse("presets:detail", args=[lantern.id, big_preset.pk])
    first = client.get(url)
    pages = first.context["paging"].count
    assert pages == -(-big_preset.node_count // 50) and 'data-testid="node-pages"' in first.content.decode()
    shown = []
    for number in range(1, pages + 1):
        shown += [node.pk for node in client.get(url, {"page": number}).context["nodes"]]
    assert shown == list(big_preset.nodes.order_by("position").values_list("pk", flat=True))
    assert client.get(url, {"page": "999"}).context["paging"].number == pages  # past the end: the last
    assert client.get(url, {"page": "x"}).context["paging"].number == 1


def test_a_drag_on_one_page_reorders_those_nodes_among_their_places_and_keeps_the_rest(
    client, alice, lantern, big_preset
):
    client.force_login(alice)
    before = list(big_preset.nodes.order_by("position").values_list("pk", flat=True))
    second_page = before[50:100]
    dragged = [second_page[-1], *second_page[:-1]]  # the page's last node dragged to its top
    url = reverse("presets:nodes-reorder", args=[lantern.id, big_preset.pk])
    response = client.post(
        url, {"version": big_preset.version, "order": dragged, "page": 2}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert [node.pk for node in response.context["nodes"]] == dragged  # the answer is that page again
    after = list(big_preset.nodes.order_by("position").values_list("pk", flat=True))
    assert after == before[:50] + dragged + before[100:]


def test_the_filtered_node_list_partial_is_constant_too(
    client, alice, lantern, big_preset, django_assert_max_num_queries
):
    client.force_login(alice)
    url = reverse("presets:detail", args=[lantern.id, big_preset.pk])
    with django_assert_max_num_queries(10):
        response = client.get(url, {"partial": "nodes", "kind": "content"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="node-list"') and "<html" not in body
