"""A server's sampling choice: set by admins, audited, validated, cached and invalidated."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.actors import SYSTEM
from engine.sampling import SamplerSettings
from presets.models import ServerSampling
from presets.sampling import cache as sampling_cache
from presets.sampling import selectors as sampling_selectors
from presets.sampling import services as sampling_services
from servers.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_a_server_without_a_choice_sends_the_presets_sampling(lantern) -> None:
    choice = sampling_selectors.sampling_choice(lantern.pk)
    assert choice.mode == "preset" and choice.provider == "openai" and choice.values == SamplerSettings()


def test_alices_choice_is_stored_typed_and_audited(lantern, alice) -> None:
    choice = sampling_services.sampling_set(
        server=lantern, mode="merged", set_values={"temperature": "0.8", "top_k": "40"}, by=alice
    )
    assert choice.mode == "merged"
    assert choice.values.to_dict() == {"temperature": 0.8, "top_k": 40}
    event = AuditEvent.objects.get(action="sampling.set")
    assert event.actor == alice and event.detail["values"] == {"temperature": 0.8, "top_k": 40}


def test_unset_removes_one_server_value_and_keeps_the_others(lantern, alice) -> None:
    sampling_services.sampling_set(server=lantern, set_values={"temperature": "0.8", "seed": "7"}, by=alice)
    choice = sampling_services.sampling_set(server=lantern, unset=["seed"], by=alice)
    assert choice.values.to_dict() == {"temperature": 0.8}


def test_a_value_outside_sillytaverns_range_is_refused_and_nothing_changes(lantern, alice) -> None:
    with pytest.raises(sampling_services.SamplingError, match="between 0 and 2"):
        sampling_services.sampling_set(
            server=lantern, mode="server", set_values={"temperature": "7"}, by=alice
        )
    assert (
        not ServerSampling.objects.exists() and not AuditEvent.objects.filter(action="sampling.set").exists()
    )


def test_an_unknown_mode_or_provider_is_refused(lantern, alice) -> None:
    with pytest.raises(sampling_services.SamplingError):
        sampling_services.sampling_set(server=lantern, mode="loud", by=alice)
    with pytest.raises(sampling_services.SamplingError):
        sampling_services.sampling_set(server=lantern, provider="mistral", by=alice)


def test_asking_nothing_writes_nothing(lantern) -> None:
    sampling_services.sampling_set(server=lantern, by=SYSTEM)
    assert not AuditEvent.objects.filter(action="sampling.set").exists()


def test_the_cached_choice_is_read_without_sql_once_warm(lantern, alice) -> None:
    sampling_services.sampling_set(server=lantern, mode="server", set_values={"seed": "3"}, by=alice)
    sampling_cache.get_sampling_choice(lantern.pk)
    with CaptureQueriesContext(connection) as queries:
        choice = sampling_cache.get_sampling_choice(lantern.pk)
    assert len(queries) == 0 and choice.values.seed == 3


@pytest.mark.django_db(transaction=True)
def test_a_change_reaches_the_cached_choice_at_once(lantern, alice) -> None:
    sampling_services.sampling_set(server=lantern, mode="server", set_values={"seed": "3"}, by=alice)
    assert sampling_cache.get_sampling_choice(lantern.pk).values.seed == 3
    sampling_services.sampling_set(server=lantern, set_values={"seed": "4"}, by=alice)
    assert sampling_cache.get_sampling_choice(lantern.pk).values.seed == 4


def test_the_panel_shows_the_server_overrides_winning_in_merged_mode(lantern, alice, warm_preset) -> None:
    choice = sampling_services.sampling_set(
        server=lantern, mode="merged", provider="anthropic", set_values={"temperature": "0.7"}, by=alice
    )
    panel = sampling_selectors.sampling_panel(choice, warm_preset)
    row = next(r for r in panel.rows if r.name == "temperature")
    assert (row.preset, row.server, row.effective) == (1.3, 0.7, 0.7)
    assert panel.generation.params["temperature"] == 0.7
    assert panel.generation.params["top_k"] == 40


def test_an_imported_preset_keeps_its_sampler_settings(warm_preset) -> None:
    assert sampling_selectors.preset_sampling(warm_preset).to_dict() == {
        "temperature": 1.3,
        "top_p": 0.9,
        "top_k": 40,
        "frequency_penalty": 0.4,
        "openai_max_tokens": 900,
        "seed": -1,
        "reasoning_effort": "auto",
    }


def test_an_outdated_choice_put_back_by_a_slow_reader_is_not_served(
    lantern, alice, django_capture_on_commit_callbacks
) -> None:
    from django.core.cache import cache

    sampling_cache.get_sampling_choice(lantern.pk)  # the default, cached
    loaded_before_the_change = cache.get(f"sampling:v1:{lantern.pk}")
    with django_capture_on_commit_callbacks(execute=True):
        sampling_services.sampling_set(server=lantern, mode="server", set_values={"seed": "3"}, by=alice)
    cache.set(f"sampling:v1:{lantern.pk}", loaded_before_the_change)
    assert sampling_cache.get_sampling_choice(lantern.pk).values.seed == 3
