"""Presets stored before sampler settings were read get them from their stored file on migrating."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@pytest.mark.django_db(transaction=True)
def test_a_preset_stored_earlier_gets_its_sampler_settings_and_a_corrected_summary(lantern) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([("presets", "0002_lz4_text_compression")])
    old_apps = executor.loader.project_state([("presets", "0002_lz4_text_compression")]).apps
    Preset = old_apps.get_model("presets", "Preset")
    stored = {"temperature": 1.3, "top_k": 40, "openai_model": "gpt-4o", "prompts": []}
    preset = Preset.objects.create(
        server_id=lantern.pk,
        name="Earlier",
        shape="prompt_manager",
        stored_text=json.dumps(stored),
        summary={"kept_not_applied": ["temperature", "top_k", "openai_model"]},
    )
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    from presets.models import Preset as Current

    migrated = Current.objects.get(pk=preset.pk)
    assert migrated.sampling == {"temperature": 1.3, "top_k": 40}
    assert migrated.summary["kept_not_applied"] == ["openai_model"]
    assert migrated.summary["sampler_settings"] == ["temperature", "top_k"]
