"""Made-up bearer tokens (issue 50, item 6): a token nobody made writes nothing to the shared cache,
and an address whose requests keep being refused for their token is answered 429 before any token
is looked up, while the Lantern's own bot keeps being served."""

from __future__ import annotations

import secrets

from django.core.cache import cache

from servers.api_auth import TOKENS
from servers.models import token_digest


def _cache_keys() -> int:
    """How many keys the shared cache holds (local memory or Redis, whichever the run uses)."""
    backend = cache._cache  # type: ignore[attr-defined]
    if isinstance(backend, dict):
        return len(backend)
    return int(backend.get_client(write=True).dbsize())


def _presets(client, server_id: int, token: str, address: str = "127.0.0.1"):
    return client.get(
        f"/api/v1/servers/{server_id}/presets", HTTP_AUTHORIZATION=f"Bearer {token}", REMOTE_ADDR=address
    )


def test_made_up_tokens_write_nothing_to_the_cache(client, lantern, api_token):
    assert _presets(client, lantern.pk, api_token).status_code == 200  # the server's generation is known
    before = _cache_keys()
    made_up = [f"tk_{secrets.token_urlsafe(24)}" for _ in range(40)]
    for token in made_up:
        assert _presets(client, lantern.pk, token).status_code == 401
    assert _cache_keys() == before
    assert all(cache.get(TOKENS.entry_key((lantern.pk, token_digest(t)))) is None for t in made_up)
    assert _presets(client, lantern.pk, api_token).status_code == 200


def test_a_flood_of_bad_tokens_from_one_address_is_refused_before_any_query(
    client, settings, lantern, api_token, django_assert_num_queries
):
    settings.API_REFUSALS_BURST = 5
    assert _presets(client, lantern.pk, api_token).status_code == 200  # the bot, before the flood
    for _ in range(5):
        assert _presets(client, lantern.pk, f"tk_{secrets.token_urlsafe(24)}").status_code == 401
    with django_assert_num_queries(0):
        refused = _presets(client, lantern.pk, f"tk_{secrets.token_urlsafe(24)}")
        no_header = client.get(f"/api/v1/servers/{lantern.pk}/presets")
    assert refused.status_code == 429 and no_header.status_code == 429
    assert refused["Retry-After"] == "1"
    assert "Too many requests with a missing, unknown or revoked API token" in refused.json()["error"]
    # the Lantern's bot, from the same address, is still served; another address is not held back
    assert _presets(client, lantern.pk, api_token).status_code == 200
    assert _presets(client, lantern.pk, "tk_made_up", address="10.0.0.2").status_code == 401


def test_another_servers_valid_token_counts_as_a_refusal(client, settings, lantern, harbor_token):
    """charlie's Harbor token probing the Lantern's addresses is refused like a made-up one."""
    settings.API_REFUSALS_BURST = 3
    answers = [_presets(client, lantern.pk, harbor_token).status_code for _ in range(4)]
    assert answers == [404, 404, 404, 429]
