"""A database error while a cache is filled serves the last good copy, the same way for every cache a
request reads (docs/reliability.md): presets, sampling, channel presets, cards, lorebooks, regex scripts.

The error is real: the table the cache loads from is renamed away for the duration (the database
answers "no such table"), on SQLite in the embedded pass and on PostgreSQL in the real-services pass.
Each case warms the cache, then a later write moves the generation (the fresh entry no longer counts)
and the process forgets what it compiled (another worker), so only the day-long stale copy is left.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import DatabaseError, connection

from characters import cache as card_cache
from characters import services as card_services
from characters.models import Card
from devtools.factories import make_preset
from engine.regex import parse_script
from lorebooks import cache as lorebook_cache
from lorebooks import services as lorebook_services
from lorebooks.models import Lorebook
from presets import cache as preset_cache
from presets import services as preset_services
from presets.channels import cache as channel_cache
from presets.channels import services as channel_services
from presets.models import ChannelPreset, Preset, ServerSampling
from presets.sampling import cache as sampling_cache
from presets.sampling import services as sampling_services
from regex_scripts import cache as regex_cache
from regex_scripts import services as regex_services
from regex_scripts.models import ServerScript
from servers import generational_cache
from servers.writes import server_write
from tests.engine.cards.test_reader import V2
from tests.present import present
from tests.regex_scripts.conftest import script

pytestmark = pytest.mark.django_db(transaction=True)

CHANNEL = 111_222_333_444_555_666


@contextlib.contextmanager
def table_unavailable(*models: Any) -> Iterator[None]:
    """Rename each model's table away, so every query on it fails in the database itself."""
    names = [model._meta.db_table for model in models]
    with connection.cursor() as cursor:
        for name in names:
            cursor.execute(f'ALTER TABLE "{name}" RENAME TO "{name}_away"')
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            for name in names:
                cursor.execute(f'ALTER TABLE "{name}_away" RENAME TO "{name}"')


def _preset(lantern, alice) -> Callable[[], Any]:
    preset_services.preset_import(
        server=lantern, raw=make_preset(("lamp", "A lamp burns.", True)), filename="Lamp.json", by=alice
    )
    return lambda: [n.node.identifier for n in present(preset_cache.get_active_preset(lantern.pk)).nodes]


def _sampling(lantern, alice) -> Callable[[], Any]:
    sampling_services.sampling_set(server=lantern, mode="server", set_values={"seed": "7"}, by=alice)
    return lambda: sampling_cache.get_sampling_choice(lantern.pk).values.seed


def _channel(lantern, alice) -> Callable[[], Any]:
    result = preset_services.preset_import(
        server=lantern,
        raw=make_preset(("harbor", "Gulls cry.", True)),
        filename="Harbor.json",
        activate=False,
        by=alice,
    )
    channel_services.channel_preset_set(server=lantern, channel_id=CHANNEL, preset=result.preset, by=alice)
    return lambda: present(channel_cache.get_preset_for_channel(lantern.pk, CHANNEL)).name


def _card(lantern, alice) -> Callable[[], Any]:
    raw = json.dumps({**V2, "data": {**V2["data"], "name": "Mira"}}).encode()
    card_services.card_import(server=lantern, raw=raw, filename="mira.json", by=alice)
    return lambda: present(card_cache.get_active_card(lantern.pk)).name


def _lorebook(lantern, alice) -> Callable[[], Any]:
    raw = json.dumps({"entries": {"0": {"uid": 0, "key": ["lamp"], "content": "The lamp is old."}}}).encode()
    lorebook_services.lorebook_import(server=lantern, raw=raw, filename="Lamps.json", by=alice)
    return lambda: [
        (book.name, len(book.entries)) for book in lorebook_cache.get_world_info(lantern.pk).books
    ]


def _regex(lantern, alice) -> Callable[[], Any]:
    regex_services.scripts_import(
        server=lantern, scripts=[parse_script(script("lamp", "lantern", name="Lamp"))], by=alice
    )
    return lambda: [s.script.name for s in regex_cache.server_regex(lantern.pk).scripts]


CACHES: dict[str, tuple[Callable[..., Callable[[], Any]], str, tuple[Any, ...]]] = {
    "presets": (_preset, "presets", (Preset,)),
    "sampling": (_sampling, "sampling", (ServerSampling,)),
    "channel presets": (_channel, "presets", (ChannelPreset, Preset)),
    "cards": (_card, "cards", (Card,)),
    "lorebooks": (_lorebook, "lorebooks", (Lorebook,)),
    "regex scripts": (_regex, "regex", (ServerScript,)),
}


@pytest.mark.parametrize("which", sorted(CACHES))
def test_a_database_error_while_filling_serves_the_stale_copy(which, lantern, alice, caplog):
    arrange, stamp, models = CACHES[which]
    read = arrange(lantern, alice)
    before = read()
    with server_write(
        server_id=lantern.pk, stamps=(stamp,)
    ):  # a later write: the fresh entry no longer counts
        pass
    generational_cache.clear_local()  # another worker: nothing compiled in this process
    with table_unavailable(*models):
        assert read() == before
    assert "serving the stale copy" in caplog.text


@pytest.mark.parametrize("which", ["lorebooks", "regex scripts"])
def test_a_database_error_with_a_warm_process_serves_its_last_copy(which, lantern, alice, caplog):
    arrange, stamp, models = CACHES[which]
    read = arrange(lantern, alice)
    before = read()
    with server_write(server_id=lantern.pk, stamps=(stamp,)):
        pass
    with table_unavailable(*models):
        assert read() == before
    assert "serving this process's last copy" in caplog.text


def test_without_any_copy_a_database_error_reaches_the_caller(lantern, alice):
    read = _preset(lantern, alice)
    with table_unavailable(Preset), pytest.raises(DatabaseError):
        read()
