"""The authorization matrix: every URL x every persona x every method, against
docs/presets.md#who-may-do-what.

Each request runs inside a savepoint that is rolled back afterwards, so every request meets the same
world; before the rollback, Harbor Hall's rows are compared with their snapshot and the response is
searched for Harbor's canary, so a request that leaks or changes another server's data fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import transaction
from django.test import Client

from presets import cache as preset_cache
from servers.models import Role
from servers.permissions import ROLE_TABLE, Action

from .conftest import CANARY, World, snapshot
from .html_scan import inline_code
from .routes import (
    API,
    GLOBAL_KWARGS,
    LOGIN_ONLY,
    METHODS,
    PAGES,
    all_routes,
    api_body,
    is_allowed_unchecked,
    page_data,
    route_url,
)

ROUTES = {route.name: route for route in all_routes()}
ALLOWED_STATUSES = {200, 201, 204, 302, 400, 409}


@dataclass
class Walk:
    """The walk's findings: one line per request that broke a rule."""

    harbor: World
    before: dict[str, Any]
    failures: list[str] = field(default_factory=list)
    requests: int = 0

    @contextmanager
    def isolated(self) -> Iterator[None]:
        point = transaction.savepoint()
        try:
            yield
            after = snapshot(self.harbor.server)
            if after != self.before:
                changed = [key for key in after if after[key] != self.before[key]]
                self.failures.append(f"  ^ changed Harbor Hall's {changed}")
        finally:
            transaction.savepoint_rollback(point)
            cache.clear()
            preset_cache.clear_local()

    def check(
        self, label: str, response: Any, expected: set[int] | int, *, login_redirect: bool = False
    ) -> None:
        self.requests += 1
        wanted = {expected} if isinstance(expected, int) else expected
        body = getattr(response, "content", b"")
        if response.status_code not in wanted:
            self.failures.append(f"{label}: {response.status_code}, expected {sorted(wanted)}")
        elif login_redirect and "/login/" not in response.headers.get("Location", ""):
            self.failures.append(f"{label}: redirected to {response.headers.get('Location')}, not the login")
        if CANARY.encode() in body:
            self.failures.append(f"{label}: the response shows Harbor Hall's data")
        if response.status_code == 200 and "text/html" in response.headers.get("Content-Type", ""):
            found = inline_code(body.decode())
            if found:
                self.failures.append(f"{label}: inline code a strict CSP would block: {found}")


def _request(client: Client, method: str, url: str, data: dict[str, Any]) -> Any:
    if method == "GET":
        return client.get(url)
    if method == "POST":
        return client.post(url, data)
    return client.generic(method, url)


def _page_rule(role: Role | None, needs: Action | str, *, superuser: bool = False) -> set[int] | int:
    if superuser or needs == LOGIN_ONLY:
        return ALLOWED_STATUSES
    if role is None:
        return 404
    return ALLOWED_STATUSES if role in ROLE_TABLE[needs] else 403  # type: ignore[index]


def _walk_pages(walk: Walk, clients: dict[str, tuple[Client, Role | None, bool]], lantern: World) -> None:
    for name, methods in PAGES.items():
        url = route_url(name, lantern)
        for method in METHODS:
            needs = methods.get(method)
            for persona, (client, role, superuser) in clients.items():
                label = f"{persona} {method} {name}"
                with walk.isolated():
                    response = _request(client, method, url, page_data(name, lantern))
                    if persona == "anonymous":
                        walk.check(label, response, {302, 405}, login_redirect=response.status_code == 302)
                    elif needs is None:
                        # Not a method this view is for: 405, or it behaves as its GET does.
                        read = methods.get("GET")
                        rule = _page_rule(role, read, superuser=superuser) if read else 405
                        walk.check(label, response, {405} | ({rule} if isinstance(rule, int) else rule))
                    else:
                        walk.check(label, response, _page_rule(role, needs, superuser=superuser))


def _walk_cross_objects(
    walk: Walk, clients: dict[str, tuple[Client, Role | None, bool]], lantern: World
) -> None:
    """Lantern's admin and a superuser name Harbor's objects under Lantern's URL: always 404."""
    for name, methods in PAGES.items():
        objects = [key for key in ROUTES[name].kwargs if key != "server_id"]
        url = route_url(name, lantern, objects=walk.harbor)
        for method in methods:
            for persona in ("alice", "superuser"):
                client = clients[persona][0]
                label = f"{persona} {method} {name} with Harbor's objects"
                with walk.isolated():
                    response = _request(client, method, url, page_data(name, walk.harbor))
                    walk.check(label, response, 404 if objects else ALLOWED_STATUSES)


def _walk_api(walk: Walk, lantern: World) -> None:
    tokens = {
        "lantern token": (lantern.live_token, None),
        "harbor token": (walk.harbor.live_token, 404),
        "revoked lantern token": (lantern.revoked_token, 401),
        "unknown token": ("tk_" + "x" * 43, 401),
        "no token": (None, 401),
        "malformed header": ("Basic " + lantern.live_token, 401),
    }
    for name, accepted in API.items():
        url = route_url(name, lantern)
        body, content_type, query = api_body(name, lantern)
        for method in METHODS:
            for label_token, (token, expected) in tokens.items():
                headers: dict[str, Any] = {}
                if token is not None:
                    headers["HTTP_AUTHORIZATION"] = token if token.startswith("Basic") else f"Bearer {token}"
                label = f"{label_token} {method} {name}"
                with walk.isolated():
                    response = Client().generic(
                        method, url + query, body, content_type=content_type, **headers
                    )
                    if method not in accepted:
                        walk.check(label, response, {405, 401, 404} if expected else 405)
                    elif expected is None:
                        walk.check(label, response, {200, 201})
                    else:
                        walk.check(label, response, expected)


def _clients(users: dict[str, User], **headers: str) -> dict[str, tuple[Client, Role | None, bool]]:
    roles = {"alice": Role.ADMIN, "bob": Role.MODERATOR, "carol": Role.SUPPORT}
    personas: dict[str, tuple[Client, Role | None, bool]] = {}
    for name, user in users.items():
        client = Client(headers=headers)
        client.force_login(user)
        personas[name] = (client, roles.get(name), name == "superuser")
    personas["anonymous"] = (Client(headers=headers), None, False)
    return personas


@pytest.fixture
def clients(alice, bob, carol, charlie, superuser) -> dict[str, tuple[Client, Role | None, bool]]:
    users = {"alice": alice, "bob": bob, "carol": carol, "charlie": charlie, "superuser": superuser}
    return _clients(users)


@pytest.fixture
def htmx_clients(alice, bob, carol, charlie, superuser) -> dict[str, tuple[Client, Role | None, bool]]:
    users = {"alice": alice, "bob": bob, "carol": carol, "charlie": charlie, "superuser": superuser}
    return _clients(users, **{"HX-Request": "true"})


def test_every_url_pattern_is_in_the_matrix_or_allowed_with_a_reason():
    missing = [
        route.name
        for route in ROUTES.values()
        if route.name not in PAGES and route.name not in API and not is_allowed_unchecked(route.name)
    ]
    assert missing == [], f"add these views to tests/security/routes.py: {missing}"


def test_every_url_kwarg_can_be_filled_with_a_real_object(lantern_world):
    known = set(lantern_world.kwargs())
    unfillable = {
        route.name: [k for k in route.kwargs if k not in known]
        for route in ROUTES.values()
        if not is_allowed_unchecked(route.name) and any(k not in known for k in route.kwargs)
    }
    assert unfillable == {}, f"teach tests/security/conftest.py World these kwargs: {unfillable}"


def test_the_matrix_names_only_urls_that_exist():
    assert [name for name in [*PAGES, *API] if name not in ROUTES] == []


def test_every_role_gets_what_spec_section_4_gives_it_on_every_page(lantern_world, harbor_world, clients):
    walk = Walk(harbor=harbor_world, before=snapshot(harbor_world.server))
    _walk_pages(walk, clients, lantern_world)
    assert walk.failures == [], "\n".join(walk.failures)
    assert walk.requests >= len(PAGES) * len(METHODS) * len(clients)


def test_htmx_requests_obey_the_same_rules_on_every_page(lantern_world, harbor_world, htmx_clients):
    walk = Walk(harbor=harbor_world, before=snapshot(harbor_world.server))
    _walk_pages(walk, htmx_clients, lantern_world)
    assert walk.failures == [], "\n".join(walk.failures)


def test_another_servers_objects_named_under_lantern_urls_are_404_even_for_a_superuser(
    lantern_world, harbor_world, clients
):
    walk = Walk(harbor=harbor_world, before=snapshot(harbor_world.server))
    _walk_cross_objects(walk, clients, lantern_world)
    assert walk.failures == [], "\n".join(walk.failures)


def test_the_api_answers_401_to_bad_or_revoked_tokens_and_404_to_another_servers_token(
    lantern_world, harbor_world
):
    walk = Walk(harbor=harbor_world, before=snapshot(harbor_world.server))
    _walk_api(walk, lantern_world)
    assert walk.failures == [], "\n".join(walk.failures)


def test_global_kwargs_are_few_and_each_has_a_reason():
    assert set(GLOBAL_KWARGS) <= {"user_id"}
    assert all(GLOBAL_KWARGS.values())
