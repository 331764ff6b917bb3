"""Two admins at the same moment, on the real PostgreSQL with real threads: exactly one active
preset, no 500, nothing half-written."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, connections
from django.test import Client
from django.urls import reverse

from core.actors import SYSTEM
from presets import services
from presets.models import Preset, PresetNode
from servers.models import Role
from servers.services import membership_set

from .conftest import FAULT_PRESET

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
ROUNDS = 8


def at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls in threads released together; their results (or exceptions) in order."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int, call: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=10)
            results[index] = call()
        except Exception as exc:  # reported to the test, which fails on it
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.fixture
def dora(django_user_model, lantern):
    """A second admin of the Lantern Guild."""
    user = django_user_model.objects.create_user(username="dora", password="correct horse battery")
    membership_set(server=lantern, user=user, role=Role.ADMIN, by=SYSTEM)
    return user


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_two_admins_activating_different_presets_at_once_leave_exactly_one_active(lantern, alice, dora):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    first, second = (
        services.preset_import(server=lantern, raw=FAULT_PRESET, filename=f"{name}.json", by=alice).preset
        for name in ("Amber", "Cobalt")
    )
    clients = _signed_in(alice), _signed_in(dora)
    for _ in range(ROUNDS):
        statuses = at_once(
            lambda: clients[0].post(reverse("presets:activate", args=[1001, first.pk])).status_code,
            lambda: clients[1].post(reverse("presets:activate", args=[1001, second.pk])).status_code,
        )
        assert statuses == [302, 302]
        assert Preset.objects.filter(server=lantern, is_active=True).count() == 1


def test_two_uploads_with_the_same_name_at_once_store_one_and_report_a_clash(lantern, alice, dora):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    clients = _signed_in(alice), _signed_in(dora)
    url = reverse("presets:upload", args=[1001])

    def upload(client: Client) -> Callable[[], int]:
        file = SimpleUploadedFile("Twin.json", FAULT_PRESET, "application/json")
        return lambda: client.post(url, {"file": file, "activate": "on"}).status_code

    for round_number in range(ROUNDS):
        statuses = at_once(upload(clients[0]), upload(clients[1]))
        expected = [302, 409] if round_number == 0 else [409, 409]
        assert sorted(statuses) == expected, statuses
    twins = Preset.objects.filter(server=lantern, name="Twin")
    assert twins.count() == 1
    assert PresetNode.objects.filter(preset=twins.get()).count() == 3  # every node of the one stored
    assert Preset.objects.filter(server=lantern, is_active=True).count() == 1


def test_two_keep_both_uploads_at_once_get_distinct_names_and_whole_node_lists(lantern, alice, dora):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    clients = _signed_in(alice), _signed_in(dora)
    url = reverse("presets:upload", args=[1001])

    def upload(client: Client) -> Callable[[], int]:
        file = SimpleUploadedFile("Twin.json", FAULT_PRESET, "application/json")
        return lambda: client.post(url, {"file": file, "activate": "on", "on_clash": "keep_both"}).status_code

    for _ in range(4):
        assert at_once(upload(clients[0]), upload(clients[1])) == [302, 302]
    names = list(Preset.objects.filter(server=lantern).values_list("name", flat=True))
    assert len(names) == len(set(names)) == 8
    assert all(PresetNode.objects.filter(preset__name=name).count() == 3 for name in names)
    assert Preset.objects.filter(server=lantern, is_active=True).count() == 1


def test_two_api_imports_of_the_same_name_at_once_answer_201_and_409(lantern, api_token, settings):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    # three at once: room for all three in the server's share, which is not what this is about
    settings.SERVER_CONCURRENT_WORK_PER_PROCESS = 3
    url = reverse("presets:api-list", args=[1001]) + "?name=Twin"

    def post() -> int:
        return (
            Client()
            .post(
                url, FAULT_PRESET, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {api_token}"
            )
            .status_code
        )

    assert sorted(at_once(post, post, post)) == [201, 409, 409]
    assert Preset.objects.filter(server=lantern, name="Twin").count() == 1
