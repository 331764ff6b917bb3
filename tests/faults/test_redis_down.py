"""Redis stops mid-run: pages and the assemble API keep answering from the database, with a warning."""

from __future__ import annotations

import logging

import pytest
from django.test import Client
from django.urls import reverse

from core import resilient_cache
from presets import cache as preset_cache

from .conftest import assemble, node_sources

pytestmark = pytest.mark.services


@pytest.fixture
def cache_on_throwaway_redis(settings, throwaway_redis, monkeypatch):
    settings.CACHES = {
        "default": {
            "BACKEND": "core.redis_cache.RedisCache",
            "LOCATION": throwaway_redis.url,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    monkeypatch.setattr(resilient_cache, "_last_warning", 0.0)
    preset_cache.clear_local()
    return throwaway_redis


def test_the_assemble_api_keeps_using_the_active_preset_after_redis_dies(
    cache_on_throwaway_redis, lamp_preset, api_token, caplog
):
    client = Client()
    warm = assemble(client, 1001, api_token)
    assert warm.status_code == 200 and node_sources(warm) == {"main", "lamp"}
    cache_on_throwaway_redis.stop()
    preset_cache.clear_local()  # another worker process: nothing compiled in memory
    with caplog.at_level(logging.WARNING, logger="tavernkeep.cache"):
        after = assemble(client, 1001, api_token)
    assert after.status_code == 200
    assert node_sources(after) == {"main", "lamp"}
    assert any("falling back to the database" in record.getMessage() for record in caplog.records)


def test_a_revoked_token_stays_refused_when_redis_dies_after_caching_it_live(
    cache_on_throwaway_redis, lamp_preset, api_token, alice
):
    from servers.models import ApiToken, token_digest
    from servers.services import api_token_revoke

    client = Client()
    assert assemble(client, 1001, api_token).status_code == 200
    cache_on_throwaway_redis.stop()
    api_token_revoke(token=ApiToken.objects.get(digest=token_digest(api_token)), by=alice)
    assert assemble(client, 1001, api_token).status_code == 401


def test_pages_keep_working_after_redis_dies(cache_on_throwaway_redis, lamp_preset, alice):
    client = Client()
    client.force_login(alice)
    urls = [
        reverse("presets:list", args=[1001]),
        reverse("presets:detail", args=[1001, lamp_preset.pk]),
        reverse("assembly:preview", args=[1001]),
        reverse("memory:review", args=[1001]),
    ]
    assert [client.get(url).status_code for url in urls] == [200] * len(urls)
    cache_on_throwaway_redis.stop()
    assert [client.get(url).status_code for url in urls] == [200] * len(urls)
    response = client.post(reverse("presets:deactivate", args=[1001, lamp_preset.pk]))
    assert response.status_code == 302
    lamp_preset.refresh_from_db()
    assert lamp_preset.is_active is False


def test_signing_in_works_while_redis_is_down(cache_on_throwaway_redis, alice):
    cache_on_throwaway_redis.stop()
    client = Client()
    response = client.post(reverse("login"), {"username": "alice", "password": "correct horse battery"})
    assert response.status_code == 302
