"""PostgreSQL unreachable: the assemble API serves the cached (or stale) preset, pages answer 503.

The test's connection goes through a CuttableProxy to the real PostgreSQL; cutting the proxy is the
outage. The suite's own server is never touched.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import close_old_connections, connection
from django.test import Client
from django.urls import reverse

from presets import cache as preset_cache
from servers.writes import server_write

from .conftest import CuttableProxy, assemble, node_sources

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def database_proxy() -> Iterator[CuttableProxy]:
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    saved = dict(connection.settings_dict)
    proxy = CuttableProxy(saved["HOST"] or "127.0.0.1", int(saved["PORT"] or 5432))
    connection.close()
    connection.settings_dict["HOST"], connection.settings_dict["PORT"] = "127.0.0.1", str(proxy.port)
    try:
        yield proxy
    finally:
        proxy.close()
        connection.close()
        connection.settings_dict["HOST"], connection.settings_dict["PORT"] = saved["HOST"], saved["PORT"]


def test_with_a_warm_cache_the_assemble_api_answers_through_an_outage(database_proxy, lamp_preset, api_token):
    client = Client()
    assert node_sources(assemble(client, 1001, api_token)) == {"main", "lamp"}
    database_proxy.cut()
    response = assemble(client, 1001, api_token)
    assert response.status_code == 200
    assert node_sources(response) == {"main", "lamp"}


def test_with_only_the_stale_copy_left_the_assemble_api_serves_it(database_proxy, lamp_preset, api_token):
    client = Client()
    assert node_sources(assemble(client, 1001, api_token)) == {"main", "lamp"}
    with server_write(
        server_id=1001, stamps=(preset_cache.STAMP,)
    ):  # a write: the fresh entry no longer counts
        pass  # (the stale copy stays)
    preset_cache.clear_local()  # and this process has nothing compiled
    database_proxy.cut()
    response = assemble(client, 1001, api_token)
    assert response.status_code == 200
    assert node_sources(response) == {"main", "lamp"}


def test_pages_answer_a_503_maintenance_page_not_a_traceback(database_proxy, lamp_preset, alice):
    client = Client()
    client.force_login(alice)
    url = reverse("presets:list", args=[1001])
    assert client.get(url).status_code == 200
    database_proxy.cut()
    for target in (url, reverse("assembly:preview", args=[1001]), reverse("login")):
        response = client.get(target)
        assert response.status_code == 503, target
        assert response.headers["Retry-After"] == "30"
        assert b"Traceback" not in response.content
        assert b"maintenance" in response.content.lower() or b"unavailable" in response.content.lower()


def test_an_api_call_that_needs_the_database_gets_a_json_503(database_proxy, lamp_preset, api_token):
    client = Client()
    database_proxy.cut()
    response = client.get(reverse("presets:api-list", args=[1001]), HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert response.status_code == 503
    assert "unavailable" in response.json()["error"]


def test_after_the_outage_pages_recover_on_their_own(database_proxy, lamp_preset, alice):
    client = Client()
    client.force_login(alice)
    url = reverse("presets:list", args=[1001])
    database_proxy.cut()
    assert client.get(url).status_code == 503
    database_proxy.open = True
    # A real server closes an unusable connection when each request ends (request_finished);
    # Django's test client disconnects that signal, so the test does what the handler would.
    close_old_connections()
    assert client.get(url).status_code == 200


def test_the_health_check_answers_503_so_the_proxy_and_orchestrator_see_the_outage(database_proxy):
    client = Client()
    assert client.get("/healthz").json() == {"database": "ok", "cache": "ok"}
    database_proxy.cut()
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"database": "unreachable", "cache": "ok"}
    close_old_connections()
