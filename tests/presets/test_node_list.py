"""The node list of a big preset renders with a constant number of queries."""

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
    assert len(response.context["nodes"]) == big_preset.node_count


def test_the_filtered_node_list_partial_is_constant_too(
    client, alice, lantern, big_preset, django_assert_max_num_queries
):
    client.force_login(alice)
    url = reverse("presets:detail", args=[lantern.id, big_preset.pk])
    with django_assert_max_num_queries(10):
        response = client.get(url, {"partial": "nodes", "kind": "content"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="node-list"') and "<html" not in body
