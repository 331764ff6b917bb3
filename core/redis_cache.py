"""The shared cache's Redis backend: Django's own, with one redis-py client kept per connection pool.

Django's Redis cache builds a new `redis.Redis` object for every call (`get_client`), and building one
costs more than the round trip it makes (redis-py fills a table of about 170 reply handlers each
time): about 0.15 ms of CPU per call, a dozen calls per assemble request. The client holds no
connection of its own (each command takes one from the pool and gives it back) and may be shared by
threads, so keeping it changes nothing else: same pools, same options, same serializer, same errors.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class KeptClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}  # id(pool) -> the client built on that pool

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
        client = self._clients.get(id(pool))
        if client is None or client.connection_pool is not pool:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = KeptClientRedisCacheClient
