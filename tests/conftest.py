"""Personas and servers every test can use: alice the admin, bob the moderator, carol the support
agent (all of the Lantern Guild), and charlie, admin of Harbor Hall only."""

from __future__ import annotations

import os

import pytest
from django.core.cache import cache

from core.actors import SYSTEM
from servers.models import Role, Server
from servers.services import api_token_create, membership_set

REAL_SERVICES = os.environ.get("DATABASE_URL", "").startswith("postgres") and bool(
    os.environ.get("REDIS_URL")
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if REAL_SERVICES or os.environ.get("RUN_BROWSER_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="runs only in the real-services pass (PostgreSQL + Redis), see .ci/run")
    for item in items:
        if "browser" in item.keywords or "services" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _generous_cpu_share(settings) -> None:
    """The suite sends one server hundreds of requests back to back, far past a server's CPU share
    of a process (core/fairness.py); tests of the share set their own figures."""
    from core import client_rate, fairness
    from servers.api_auth import forget_refusals

    settings.SERVER_CPU_SHARE = 1000.0
    fairness._credit.clear()
    fairness._seen.clear()
    # the same for one browser's requests (core/client_rate.py); its tests set their own figures
    settings.CLIENT_REQUESTS_PER_SECOND = 100_000.0
    settings.ACCOUNT_REQUESTS_PER_SECOND = 100_000.0
    client_rate.forget()
    # and for the API's refusals per address (servers/api_auth.py): the suite's many 401s come from one
    settings.API_REFUSALS_BURST = 1_000_000
    forget_refusals()
    # PostgreSQL's notifications need a listening connection, which would keep the test database
    # from being dropped: the tests that need it turn it on and stop it (tests/faults).
    settings.CACHE_STAMP_LISTENER = False
    # A test's rows are in its own transaction, which a child process (core/offload.py) cannot see:
    # heavy page work runs inline; tests/scaling/test_offload.py turns the children on.
    settings.OFFLOAD_WORKERS = 0


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    from conversations.channels.selectors import forget_channel_rows
    from core.resilient_cache import reset_breaker
    from presets.cache import clear_local as clear_previews
    from servers.generational_cache import forget_everything_local

    reset_breaker()  # a cache failure in an earlier test does not keep this one from asking
    cache.clear()
    forget_everything_local()  # every app's cache: each test starts as a brand-new process
    forget_channel_rows()
    clear_previews()


@pytest.fixture
def lantern(db) -> Server:
    return Server.objects.create(id=1001, name="The Lantern Guild")


@pytest.fixture
def harbor(db) -> Server:
    return Server.objects.create(id=2002, name="Harbor Hall")


def _member(django_user_model, username: str, server: Server, role: Role):
    user = django_user_model.objects.create_user(username=username, password="correct horse battery")
    membership_set(server=server, user=user, role=role, by=SYSTEM)
    return user


@pytest.fixture
def alice(django_user_model, lantern):
    return _member(django_user_model, "alice", lantern, Role.ADMIN)


@pytest.fixture
def bob(django_user_model, lantern):
    return _member(django_user_model, "bob", lantern, Role.MODERATOR)


@pytest.fixture
def carol(django_user_model, lantern):
    return _member(django_user_model, "carol", lantern, Role.SUPPORT)


@pytest.fixture
def charlie(django_user_model, harbor):
    return _member(django_user_model, "charlie", harbor, Role.ADMIN)


@pytest.fixture
def superuser(django_user_model):
    return django_user_model.objects.create_superuser("root", "root@example.invalid", "correct horse battery")


@pytest.fixture
def api_token(lantern, alice) -> str:
    """A live bearer token for the Lantern Guild."""
    _, plain = api_token_create(server=lantern, name="bot", by=alice)
    return plain


@pytest.fixture
def harbor_token(harbor, charlie) -> str:
    _, plain = api_token_create(server=harbor, name="bot", by=charlie)
    return plain
