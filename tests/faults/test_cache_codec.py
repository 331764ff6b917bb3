"""The shared cache holds data, never pickles (issue 35, item 8). Real Redis (the suite's db)."""

from __future__ import annotations

import pickle

import pytest
from django.conf import settings
from django.core.cache import cache

from core.resilient_cache import cache_get
from presets import cache as preset_cache

pytestmark = pytest.mark.skipif(
    "redis" not in settings.CACHES["default"]["BACKEND"].lower(), reason="needs REDIS_URL (the shared cache)"
)


class _Boom:
    def __reduce__(self):
        return (exec, ("import pathlib; pathlib.Path('/tmp/tk_issue35_pwned').write_text('ran')",))


def _raw_client():
    return cache._cache.get_client(write=True)  # type: ignore[attr-defined]  # Django's Redis backend's client


def test_a_pickle_planted_in_redis_runs_nothing_and_reads_as_a_miss(tmp_path):
    import pathlib

    marker = pathlib.Path("/tmp/tk_issue35_pwned")
    marker.unlink(missing_ok=True)
    key = cache.make_and_validate_key("planted")
    _raw_client().set(key, pickle.dumps(_Boom()))
    assert cache_get("planted", "miss") == "miss"
    assert not marker.exists()


def test_a_value_naming_a_class_outside_the_app_is_refused():
    import msgpack

    from core.cache_codec import _DATACLASS, MAGIC, CacheDecodeError, _pack, loads

    planted = MAGIC + msgpack.packb(
        msgpack.ExtType(_DATACLASS, _pack(["subprocess:Popen", [["true"]]])), use_bin_type=True
    )
    with pytest.raises(CacheDecodeError, match="outside the app"):
        loads(planted)


def test_the_active_preset_round_trips_through_redis_as_data(lantern, alice):
    from devtools.factories import make_preset
    from presets.services import preset_import

    preset_import(server=lantern, raw=make_preset(("greet", "Hello.", True)), filename="Inn.json", by=alice)
    stored = preset_cache._load_active(lantern.pk)
    cache.set("roundtrip", (7, stored))
    raw = _raw_client().get(cache.make_and_validate_key("roundtrip"))
    assert not raw.startswith(b"\x80")  # not a pickle
    assert cache.get("roundtrip") == (7, stored)
    cache.delete("counter")
    assert cache.add("counter", 1) and cache.incr("counter") == 2  # counters stay Redis integers
