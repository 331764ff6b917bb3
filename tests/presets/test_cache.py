"""The active-preset cache: zero queries on a hit, invalidated by every write, resilient to outages."""

from __future__ import annotations

import pickle

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.resilient_cache import cache_get, cache_set
from devtools.factories import make_preset
from engine import CompiledPreset
from presets import cache as preset_cache
from presets import services
from presets.models import Preset
from servers.generational_cache import generation_key
from servers.writes import server_write

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_active_preset_comes_compiled_with_its_nodes_in_order(lantern, house_style):
    compiled = preset_cache.get_active_preset(lantern.id)
    assert isinstance(compiled, CompiledPreset)
    assert compiled.preset_id == house_style.pk and compiled.name == "House Style"
    assert [n.node.identifier for n in compiled.nodes][:3] == [
        "main",
        "c6f1c2a0-house-rules-heading",
        "a1d0e6b2-tone",
    ]
    assert compiled.settings.squash_system_messages is True
    main = compiled.nodes[0]
    assert main.template is not None and main.template.source == main.node.content


def test_a_cache_hit_makes_zero_queries(lantern, house_style, django_assert_num_queries):
    preset_cache.get_active_preset(lantern.id)
    with django_assert_num_queries(0):
        compiled = preset_cache.get_active_preset(lantern.id)
        assert compiled is not None
    assert compiled.preset_id == house_style.pk


def test_no_active_preset_is_cached_too(lantern, django_assert_num_queries):
    assert preset_cache.get_active_preset(lantern.id) is None
    with django_assert_num_queries(0):
        assert preset_cache.get_active_preset(lantern.id) is None


def test_the_compiled_preset_survives_pickling(lantern, house_style):
    compiled = preset_cache.get_active_preset(lantern.id)
    assert pickle.loads(pickle.dumps(compiled)) == compiled


def loads_from_database(server_id: int) -> bool:
    """True when reading the active preset had to query the database (the cache was invalidated)."""
    with CaptureQueriesContext(connection) as queries:
        preset_cache.get_active_preset(server_id)
    return len(queries) > 0


WRITES = {
    "activate": lambda p, by: services.preset_activate(preset=p["second"], by=by),
    "deactivate": lambda p, by: services.preset_deactivate(preset=p["house"], by=by),
    "rename": lambda p, by: services.preset_rename(preset=p["house"], name="Renamed", by=by),
    "delete": lambda p, by: services.preset_delete(preset=p["house"], by=by),
    "style": lambda p, by: services.preset_set_injection_style(preset=p["house"], style="standalone", by=by),
    "toggle": lambda p, by: services.node_set_enabled(
        node=p["house"].nodes.get(identifier="main"), enabled=False, by=by
    ),
    "bulk": lambda p, by: services.nodes_set_enabled(
        preset=p["house"], node_ids=list(p["house"].nodes.values_list("pk", flat=True)), enabled=False, by=by
    ),
    "import": lambda p, by: services.preset_import(
        server=p["house"].server, raw=make_preset(), filename="Fresh.json", by=by
    ),
    "replace": lambda p, by: services.preset_import(
        server=p["house"].server, raw=make_preset(), filename="House Style.json", on_clash="replace", by=by
    ),
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_every_write_invalidates_the_cache(write, lantern, alice, house_style, second_preset):
    preset_cache.get_active_preset(lantern.id)
    assert not loads_from_database(lantern.id)
    WRITES[write]({"house": house_style, "second": second_preset}, alice)
    assert loads_from_database(lantern.id)


def test_after_a_toggle_the_cached_preset_shows_the_new_state(lantern, alice, house_style):
    preset_cache.get_active_preset(lantern.id)
    services.node_set_enabled(
        node=house_style.nodes.get(identifier="d4c2b8f1-no-ooc"), enabled=False, by=alice
    )
    compiled = preset_cache.get_active_preset(lantern.id)
    assert compiled is not None
    assert not next(n for n in compiled.nodes if n.node.identifier == "d4c2b8f1-no-ooc").node.enabled


def test_deleting_the_active_preset_makes_the_cache_say_native(lantern, alice, house_style, second_preset):
    preset_cache.get_active_preset(lantern.id)
    services.preset_delete(preset=house_style, by=alice)
    assert preset_cache.get_active_preset(lantern.id) is None


def test_a_reader_that_loaded_before_a_write_cannot_put_the_old_preset_back(lantern, alice, house_style):
    # Simulate the race: a reader reads the generation, the write happens, then the reader stores.
    preset_cache.get_active_preset(lantern.id)
    generation_before = cache_get(generation_key("presets", lantern.id))
    old = preset_cache.ACTIVE.load(lantern.id)
    services.preset_deactivate(preset=house_style, by=alice)
    cache_set(preset_cache.ACTIVE.entry_key(lantern.id), (generation_before, old), 600)
    assert preset_cache.get_active_preset(lantern.id) is None


def test_a_cache_hit_in_a_fresh_process_compiles_from_the_shared_cache_without_queries(
    lantern, house_style, django_assert_num_queries
):
    preset_cache.get_active_preset(lantern.id)
    preset_cache.clear_local()
    with django_assert_num_queries(0):
        compiled = preset_cache.get_active_preset(lantern.id)
        assert compiled is not None
    assert compiled.preset_id == house_style.pk and compiled.nodes[0].template is not None


def test_when_the_cache_backend_errors_the_database_answers(lantern, house_style, settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "core.redis_cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1: every call fails
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
        }
    }
    from core.resilient_cache import cache_set

    assert cache_set("probe", 1, 5) is False  # the backend really is down
    compiled = preset_cache.get_active_preset(lantern.id)
    assert compiled is not None and compiled.preset_id == house_style.pk
    with server_write(server_id=lantern.id, stamps=(preset_cache.STAMP,)):  # a write must not raise either
        pass


def test_get_preset_compiles_an_inactive_preset_for_the_preview(second_preset):
    compiled = preset_cache.get_preset(second_preset.pk)
    assert compiled.name == "Second" and [n.node.identifier for n in compiled.nodes][1] == "rules"


def test_get_preset_of_a_missing_preset_raises(db):
    with pytest.raises(Preset.DoesNotExist):
        preset_cache.get_preset(999_999)


@pytest.mark.parametrize("write", sorted(WRITES))
def test_every_write_leaves_one_audit_entry_by_alice(write, lantern, alice, house_style, second_preset):
    from servers.models import AuditEvent

    before = AuditEvent.objects.filter(server=lantern, actor=alice, action__startswith="preset.").count()
    WRITES[write]({"house": house_style, "second": second_preset}, alice)
    after = AuditEvent.objects.filter(server=lantern, actor=alice, action__startswith="preset.").count()
    assert after == before + 1


def test_previewing_a_preset_twice_compiles_it_once_and_sees_later_toggles(
    second_preset, alice, django_assert_num_queries
):
    first = preset_cache.get_preset(second_preset.pk)
    with django_assert_num_queries(1):
        assert preset_cache.get_preset(second_preset.pk) is first
    services.node_set_enabled(node=second_preset.nodes.get(identifier="rules"), enabled=False, by=alice)
    again = preset_cache.get_preset(second_preset.pk)
    assert again is not first
    assert not next(n for n in again.nodes if n.node.identifier == "rules").node.enabled
