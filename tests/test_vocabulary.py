"""The words the engine declares once are the words the database columns accept."""

from __future__ import annotations

from engine import PROVIDERS, STYLES
from presets.models import InjectionStyle, SamplingProvider


def test_a_preset_can_store_every_injection_style_the_engine_knows_and_no_other():
    assert tuple(InjectionStyle.values) == STYLES


def test_a_server_can_choose_every_provider_the_engine_shapes_for_and_no_other():
    assert tuple(SamplingProvider.values) == PROVIDERS
