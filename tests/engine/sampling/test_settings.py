"""Reading a preset's sampler settings and combining them with a server's choice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.sampling import (
    PROVIDERS,
    SamplerSettings,
    SamplingValueError,
    effective_settings,
    generation_settings,
    parse_server_value,
    sampler_settings_of,
)
from engine.st_format import ImportRefused, parse_preset
from tests.corpus import CORPUS, needs_corpus

PRESET_FILES = sorted((CORPUS / "pm").glob("*.json")) + sorted((CORPUS / "legacy").glob("*.json"))


def test_the_chat_names_are_read_from_the_top_level_of_a_preset() -> None:
    settings = sampler_settings_of({"temperature": 1.3, "top_k": 40, "openai_max_tokens": 900, "prompts": []})
    assert settings.to_dict() == {"temperature": 1.3, "top_k": 40, "openai_max_tokens": 900}


def test_text_completion_names_are_read_when_the_chat_name_is_absent() -> None:
    settings = sampler_settings_of({"temp": 1.2, "rep_pen": 1.1, "genamt": 400, "temperature": None})
    assert settings.to_dict() == {"temperature": 1.2, "repetition_penalty": 1.1, "openai_max_tokens": 400}
    assert sampler_settings_of({"temp": 1.2, "temperature": 0.7}).temperature == 0.7


def test_the_preset_mode_ignores_the_servers_values() -> None:
    preset, server = SamplerSettings(temperature=1.3), SamplerSettings(temperature=0.7)
    assert effective_settings("preset", preset, server) == preset


def test_the_server_mode_ignores_the_presets_values() -> None:
    preset, server = SamplerSettings(temperature=1.3, top_k=40), SamplerSettings(openai_max_tokens=500)
    assert effective_settings("server", preset, server) == server


def test_in_merged_mode_the_servers_values_win_field_by_field() -> None:
    preset = SamplerSettings(temperature=1.3, top_k=40)
    server = SamplerSettings(temperature=0.8, openai_max_tokens=500)
    assert effective_settings("merged", preset, server).to_dict() == {
        "temperature": 0.8,
        "top_k": 40,
        "openai_max_tokens": 500,
    }


def test_without_a_preset_only_the_server_values_apply_except_in_preset_mode() -> None:
    server = SamplerSettings(temperature=0.8)
    assert effective_settings("merged", None, server) == server
    assert effective_settings("server", None, server) == server
    assert effective_settings("preset", None, server) == SamplerSettings()


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("temperature", "0.7", 0.7),
        ("top_k", "40", 40),
        ("seed", "-1", -1),
        ("reasoning_effort", "high", "high"),
    ],
)
def test_an_admin_value_is_parsed_to_its_type(name: str, text: str, value) -> None:
    assert parse_server_value(name, text) == value


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("temperature", "3"),
        ("temperature", "warm"),
        ("temperature", "nan"),
        ("top_k", "4.5"),
        ("top_k", "-1"),
        ("openai_max_tokens", "0"),
        ("reasoning_effort", "extreme"),
        ("mirostat", "1"),
    ],
)
def test_an_admin_value_outside_sillytaverns_range_is_refused_with_one_sentence(name: str, text: str) -> None:
    with pytest.raises(SamplingValueError) as raised:
        parse_server_value(name, text)
    assert raised.value.message.endswith(".") and "\n" not in raised.value.message


@needs_corpus
@pytest.mark.parametrize("path", PRESET_FILES, ids=[p.name for p in PRESET_FILES])
def test_every_corpus_preset_maps_for_every_provider(path: Path) -> None:
    try:
        parsed = parse_preset(path.read_bytes(), filename=path.name)
    except ImportRefused:
        pytest.skip("refused files are not stored")
    settings = SamplerSettings.from_dict(parsed.sampling)
    assert settings == sampler_settings_of(json.loads(parsed.stored_text, strict=False))
    for provider in PROVIDERS:
        result = generation_settings(settings, provider)
        json.dumps(result.to_dict())
        assert all(d.reason for d in result.dropped)
        if provider == "openai":
            assert "top_k" not in result.params
