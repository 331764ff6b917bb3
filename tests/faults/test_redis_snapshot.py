"""Redis comes back from a snapshot taken before a change (issue 25, point 3): a revoked API token is
refused and an edited preset is served as edited, not as the snapshot remembers them.

The snapshot is real: every key of the suite's Redis database is DUMPed (with its time to live), the
change is made, then the database is emptied and the dumps RESTOREd — what a Redis restarted from an
old RDB/AOF file holds. Each check is made both by this process (which saw the change) and by a
brand-new process; a process that checked just before the change and not since is held to the bound
CACHE_STAMP_CHECK_SECONDS (docs/reliability.md).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis
from django.conf import settings
from django.test import Client

from presets import services as preset_services
from servers import generational_cache
from servers.models import ApiToken
from servers.services import api_token_revoke

from .conftest import assemble, node_sources

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


class Snapshot:
    """Every key of the test's Redis database, as DUMP gives it, with its remaining lifetime."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self.keys = {key: (client.dump(key), client.pttl(key)) for key in client.scan_iter(count=1000)}

    def restore(self) -> None:
        """Redis restarted from this snapshot: what was written since is gone, the rest is back."""
        self.client.flushdb()
        for key, (dumped, ttl) in self.keys.items():
            if dumped is not None:
                self.client.restore(key, max(ttl, 0), dumped, replace=True)


@pytest.fixture
def redis_client() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
    yield client
    client.close()


def a_new_process() -> None:
    generational_cache.forget_everything_local()


def test_a_token_revoked_after_the_snapshot_stays_revoked(redis_client, lamp_preset, api_token, alice):
    client = Client()
    assert assemble(client, 1001, api_token).status_code == 200  # the token's answer is cached
    snapshot = Snapshot(redis_client)
    assert any(b"apitoken" in key for key in snapshot.keys)
    api_token_revoke(token=ApiToken.objects.get(server_id=1001), by=alice)
    snapshot.restore()
    assert assemble(client, 1001, api_token).status_code == 401  # this process saw the revocation
    a_new_process()
    snapshot.restore()
    assert assemble(client, 1001, api_token).status_code == 401


def test_a_preset_edited_after_the_snapshot_is_served_as_edited(redis_client, lamp_preset, api_token, alice):
    client = Client()
    assert node_sources(assemble(client, 1001, api_token)) == {"main", "lamp"}
    snapshot = Snapshot(redis_client)
    lamp = lamp_preset.nodes.get(identifier="lamp")
    preset_services.node_set_enabled(node=lamp, enabled=False, by=alice)
    snapshot.restore()
    assert node_sources(assemble(client, 1001, api_token)) == {"main"}
    a_new_process()
    snapshot.restore()
    assert node_sources(assemble(client, 1001, api_token)) == {"main"}


def test_a_process_that_missed_the_change_believes_the_snapshot_at_most_the_bound(
    redis_client, lamp_preset, api_token, alice, settings
):
    settings.CACHE_STAMP_CHECK_SECONDS = 1.0
    client = Client()
    assert assemble(client, 1001, api_token).status_code == 200
    snapshot = Snapshot(redis_client)
    with generational_cache._seen_lock:
        before_the_change = dict(generational_cache._seen)  # what another worker knows
    api_token_revoke(token=ApiToken.objects.get(server_id=1001), by=alice)
    snapshot.restore()
    with generational_cache._seen_lock:
        generational_cache._seen.clear()
        generational_cache._seen.update(before_the_change)
    time.sleep(settings.CACHE_STAMP_CHECK_SECONDS + 0.1)
    assert assemble(client, 1001, api_token).status_code == 401
