"""A web process warmed at start (config.serve → assembly.warmup) answers its first assemble
request without compiling or loading a preset and without loading the token tables."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assembly.warmup import warm_process
from core.actors import Agent
from presets.cache import clear_local


def test_the_first_request_after_the_warm_up_reads_no_preset_from_the_database(
    client, api_token, stored_preset, sample_document
):
    clear_local()
    warm_process(close_connections=False)
    url = reverse("assembly:api-assemble", args=[stored_preset.server_id])
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            url, sample_document, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {api_token}"
        )
    assert response.status_code == 200
    assert response.json()["preset"] == stored_preset.name
    assert not [q["sql"] for q in queries.captured_queries if "presets_" in q["sql"]]


def test_a_warm_up_without_any_active_preset_still_loads_the_token_tables(db):
    from engine.tokens import _encoder

    _encoder.cache_clear()
    warm_process(close_connections=False)
    assert _encoder.cache_info().currsize == 1


def test_after_the_warm_up_carol_previews_the_active_and_another_preset_without_reading_their_nodes(
    client, carol, stored_preset
):
    import json

    from presets.services import preset_import
    from tests.assembly.conftest import XSS_PRESET

    other = preset_import(
        server=stored_preset.server,
        raw=json.dumps(XSS_PRESET).encode(),
        filename="second.json",
        activate=False,
        by=Agent("test"),
    ).preset
    clear_local()
    warm_process(close_connections=False)
    client.force_login(carol)
    for preset in (stored_preset, other):
        url = reverse("assembly:preview", args=[stored_preset.server_id]) + f"?preset={preset.pk}"
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        assert response.status_code == 200
        assert not [q["sql"] for q in queries.captured_queries if "presets_presetnode" in q["sql"]]
