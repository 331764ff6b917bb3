"""Everything under /api/ answers JSON `{"error": sentence}` with the right status (docs/bot.md): a
trailing slash, an unknown address, a method an address does not take, a misspelt body field. Served
through the real WSGI application (config/wsgi.py), so the API's own short middleware stack answers."""

from __future__ import annotations

import httpx
import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

pytestmark = pytest.mark.django_db

BASE = "http://testserver/api/v1/servers/1001"
CHANNEL = "1234567890123456789"
USER = "987654321098765432"

# Every route family the bot can call: (path, the methods it takes).
ROUTES = {
    "assemble": ("POST",),
    "regex/clean": ("POST",),
    "stm/turns": ("POST",),
    "stm/summary": ("POST", "PUT"),
    "stm/entries": ("GET",),
    f"stm/users/{USER}/opt-in": ("POST",),
    "directory": ("GET", "POST"),
    "presets": ("GET", "POST"),
    "presets/active": ("GET",),
    "lorebooks": ("GET", "POST"),
    "card": ("GET",),
}


@pytest.fixture
def api(api_token):
    from config.wsgi import application

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    client = httpx.Client(
        transport=httpx.WSGITransport(app=application), headers={"Authorization": f"Bearer {api_token}"}
    )
    yield client
    client.close()
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def error_of(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text[:300]
    assert response.headers["Content-Type"].startswith("application/json")
    answer = response.json()
    assert list(answer) == ["error"] and answer["error"].endswith((".", "?"))
    return answer["error"]


@pytest.mark.parametrize("route", ROUTES)
def test_a_trailing_slash_is_a_json_404_that_says_to_drop_it(api, route):
    said = error_of(api.request(ROUTES[route][0], f"{BASE}/{route}/", json={}), 404)
    assert "trailing slash" in said and f"/api/v1/servers/1001/{route}." in said


@pytest.mark.parametrize("route", ROUTES)
def test_a_method_the_address_does_not_take_is_a_json_405(api, route):
    method = "DELETE" if "GET" in ROUTES[route] else "GET"
    response = api.request(method, f"{BASE}/{route}")
    said = error_of(response, 405)
    assert method in said or "Use" in said


@pytest.mark.parametrize(
    "path", ["/api/", "/api/v1/servers/1001/asemble", "/api/v2/anything", "/api/v1/servers/x"]
)
def test_an_unknown_api_address_is_a_json_404(api, path):
    assert "No such API address" in error_of(api.get(f"http://testserver{path}"), 404)


def test_pages_keep_their_html_404(api):
    response = api.get("http://testserver/no-such-page/")
    assert response.status_code == 404 and response.headers["Content-Type"].startswith("text/html")


def test_a_get_on_assemble_names_the_method_to_use(api):
    response = api.get(f"{BASE}/assemble")
    assert "POST" in error_of(response, 405) and response.headers["Allow"] == "POST"


def test_a_misspelt_assemble_field_is_a_400_naming_it_and_the_right_one(api):
    body = {"histroy": [{"role": "user", "name": "Mira", "content": "Any ale left?"}]}
    said = error_of(api.post(f"{BASE}/assemble", json=body), 400)
    assert "`histroy`" in said and "`history`" in said


def test_a_misspelt_field_inside_buckets_is_a_400_too(api):
    said = error_of(
        api.post(f"{BASE}/assemble", json={"buckets": {"histroy": []}, "provider": "openai"}), 400
    )
    assert "`histroy`" in said and "`buckets`" in said


def test_every_documented_assemble_field_is_accepted(api):
    body = {
        "version": 1,
        "history": [{"role": "user", "name": "Mira", "content": "Any ale left?"}],
        "names": {"user": "Mira", "char": "Lantern"},
        "variables": {},
        "stm_context": {"channel": CHANNEL, "user": USER, "has_tools": True, "provider": "openai"},
        "provider": "openai",
        "native": True,
        "style": "merge",
        "channel": CHANNEL,
    }
    response = api.post(f"{BASE}/assemble", json=body)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("regex/clean", {"text": "Hi", "nmaes": {}}, "nmaes"),
        ("stm/turns", {"channel": CHANNEL, "user": USER, "messages": [], "histroy": []}, "histroy"),
        ("stm/summary", {"channel": CHANNEL, "user": USER, "summary": "x", "sumary": "y"}, "sumary"),
        (f"stm/users/{USER}/opt-in", {"opt_in": True, "optin": True}, "optin"),
        ("directory", {"channels": [], "member": []}, "member"),
        ("directory", {"channels": [{"id": CHANNEL, "name": "cellar", "privat": True}]}, "privat"),
    ],
)
def test_an_unknown_body_field_is_a_400_naming_it_and_nothing_is_stored(api, route, body, field):
    assert f"`{field}`" in error_of(api.post(f"{BASE}/{route}", json=body), 400)
    from memory.models import StmEntry
    from servers.models import ServerDirectory

    assert not StmEntry.objects.exists() and not ServerDirectory.objects.exists()


def test_a_turn_without_messages_is_a_400(api):
    said = error_of(api.post(f"{BASE}/stm/turns", json={"channel": CHANNEL, "user": USER}), 400)
    assert "`messages`" in said


def test_another_guilds_token_is_told_that_each_guild_has_its_own_token(api, harbor_token):
    """charlie's Harbor Hall token on the Lantern Guild's address: the answer explains tokens per
    guild, and reads the same for a server id that does not exist (no hint which servers exist)."""
    headers = {"Authorization": f"Bearer {harbor_token}"}
    said = error_of(api.get(f"{BASE}/presets", headers=headers), 404)
    assert "each Discord guild is its own server with its own token" in said
    nowhere = error_of(api.get("http://testserver/api/v1/servers/99999/presets", headers=headers), 404)
    assert nowhere == said
