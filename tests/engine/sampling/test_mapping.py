"""The provider rules of docs/sampling.md, one behaviour per test, written from the API references."""

from __future__ import annotations

from typing import Any

import pytest

from engine.sampling import (
    PROVIDERS,
    SETTING_NAMES,
    SamplerSettings,
    generation_settings,
    with_generation_settings,
)


def _map(provider: str, **settings):
    return generation_settings(SamplerSettings(**settings), provider)


def _dropped(result) -> dict[str, str]:
    return {d.name: d.reason for d in result.dropped}


def test_top_k_is_dropped_for_openai_which_has_no_such_parameter() -> None:
    result = _map("openai", top_k=40)
    assert "top_k" not in result.params
    assert "no top_k" in _dropped(result)["top_k"]


def test_top_k_is_sent_to_anthropic_and_to_gemini_under_their_names() -> None:
    assert _map("anthropic", top_k=40).params == {"top_k": 40}
    assert _map("gemini", top_k=40).params == {"topK": 40}


def test_top_k_zero_is_off_and_sends_nothing_anywhere() -> None:
    for provider in PROVIDERS:
        result = _map(provider, top_k=0)
        assert result.params == {} and "top_k" in _dropped(result)


def test_a_temperature_above_anthropics_maximum_is_clamped_to_one_with_a_sentence() -> None:
    result = _map("anthropic", temperature=1.3)
    assert result.params == {"temperature": 1}
    assert any("temperature 1.3" in note and "maximum of 1" in note for note in result.adjusted)


def test_the_same_temperature_goes_to_openai_and_gemini_unchanged() -> None:
    assert _map("openai", temperature=1.3).params == {"temperature": 1.3}
    assert _map("gemini", temperature=1.3).params == {"temperature": 1.3}


def test_a_penalty_beyond_openais_range_is_clamped() -> None:
    result = _map("openai", frequency_penalty=-3, presence_penalty=2.5)
    assert result.params == {"frequency_penalty": -2, "presence_penalty": 2}
    assert len(result.adjusted) == 2


def test_penalties_are_not_sent_to_anthropic() -> None:
    result = _map("anthropic", frequency_penalty=0.7, presence_penalty=0.7)
    assert result.params == {}
    assert set(_dropped(result)) == {"frequency_penalty", "presence_penalty"}


def test_gemini_gets_non_zero_penalties_and_leaves_zero_ones_to_its_default() -> None:
    result = _map("gemini", frequency_penalty=0.3, presence_penalty=0)
    assert result.params == {"frequencyPenalty": 0.3}
    assert "presence_penalty" in _dropped(result)


def test_samplers_no_provider_accepts_are_dropped_everywhere_with_a_reason() -> None:
    for provider in PROVIDERS:
        result = _map(provider, min_p=0.05, top_a=0.2, repetition_penalty=1.1)
        assert result.params == {}
        assert set(_dropped(result)) == {"min_p", "top_a", "repetition_penalty"}
        assert all(_dropped(result).values())


def test_max_tokens_becomes_each_providers_output_limit() -> None:
    assert _map("openai", openai_max_tokens=800).params == {"max_completion_tokens": 800}
    assert _map("anthropic", openai_max_tokens=800).params == {"max_tokens": 800}
    assert _map("gemini", openai_max_tokens=800).params == {"maxOutputTokens": 800}


def test_a_max_tokens_of_zero_sends_nothing_so_the_providers_default_applies() -> None:
    for provider in PROVIDERS:
        result = _map(provider, openai_max_tokens=0)
        assert result.params == {} and "openai_max_tokens" in _dropped(result)


def test_a_fractional_whole_number_setting_is_rounded_and_said() -> None:
    result = _map("gemini", top_k=40.6)
    assert result.params == {"topK": 41}
    assert "not a whole number" in result.adjusted[0]


def test_a_negative_seed_is_random_and_sends_nothing() -> None:
    for provider in ("openai", "gemini"):
        assert "seed" in _dropped(_map(provider, seed=-1))
        assert "seed" in _dropped(_map(provider, seed=-7))


def test_a_fixed_seed_goes_to_openai_and_gemini_but_anthropic_has_none() -> None:
    assert _map("openai", seed=42).params == {"seed": 42}
    assert _map("gemini", seed=42).params == {"seed": 42}
    assert "no seed" in _dropped(_map("anthropic", seed=42))["seed"]


def test_a_seed_beyond_geminis_int32_is_clamped() -> None:
    assert _map("gemini", seed=2**40).params == {"seed": 2**31 - 1}


def test_a_value_that_is_not_a_number_is_dropped_and_named() -> None:
    for provider in PROVIDERS:
        result = _map(provider, temperature="1.0", openai_max_tokens=True)
        assert result.params == {}
        assert "not a number" in _dropped(result)["temperature"]
        assert "not a number" in _dropped(result)["openai_max_tokens"]


def test_top_p_of_one_is_anthropics_default_and_is_not_sent_beside_temperature() -> None:
    result = _map("anthropic", temperature=0.8, top_p=1)
    assert result.params == {"temperature": 0.8}
    assert "top_p" in _dropped(result)


def test_openai_reasoning_effort_keeps_its_words_and_maps_sillytaverns_ends() -> None:
    assert _map("openai", reasoning_effort="medium").params == {"reasoning_effort": "medium"}
    assert _map("openai", reasoning_effort="min").params == {"reasoning_effort": "minimal"}
    assert _map("openai", reasoning_effort="max").params == {"reasoning_effort": "high"}


def test_auto_reasoning_effort_sends_nothing_anywhere() -> None:
    for provider in PROVIDERS:
        result = _map(provider, reasoning_effort="auto", openai_max_tokens=8000)
        assert "reasoning_effort" in _dropped(result)
        assert set(result.params) <= {"max_completion_tokens", "max_tokens", "maxOutputTokens"}


def test_an_unknown_reasoning_effort_is_dropped() -> None:
    assert "not one of" in _dropped(_map("openai", reasoning_effort="extreme"))["reasoning_effort"]


def test_gemini_reasoning_effort_becomes_a_thinking_budget_that_grows_with_the_effort() -> None:
    budgets = [
        _map("gemini", reasoning_effort=e).params["thinkingConfig"]["thinkingBudget"]
        for e in ("min", "low", "medium", "high", "max")
    ]
    assert budgets == sorted(budgets) and len(set(budgets)) == 5
    assert budgets[0] >= 512 and budgets[-1] <= 24576  # every Gemini 2.5 model's documented range


def test_anthropic_thinking_gets_a_budget_of_at_least_1024_below_max_tokens() -> None:
    for effort in ("min", "low", "medium", "high", "max"):
        thinking = _map("anthropic", reasoning_effort=effort, openai_max_tokens=4000).params["thinking"]
        assert thinking["type"] == "enabled"
        assert 1024 <= thinking["budget_tokens"] < 4000


def test_anthropic_thinking_needs_max_tokens_above_its_minimum_budget() -> None:
    assert "no max tokens" in _dropped(_map("anthropic", reasoning_effort="high"))["reasoning_effort"]
    result = _map("anthropic", reasoning_effort="high", openai_max_tokens=1000)
    assert "thinking" not in result.params and "reasoning_effort" in _dropped(result)


def test_anthropic_thinking_drops_temperature_and_top_k_and_lifts_top_p() -> None:
    result = _map(
        "anthropic", reasoning_effort="high", openai_max_tokens=8000, temperature=0.7, top_k=40, top_p=0.9
    )
    assert set(result.params) == {"max_tokens", "thinking", "top_p"}
    assert result.params["top_p"] == 0.95
    assert {"temperature", "top_k"} <= set(_dropped(result))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_setting_is_either_sent_or_dropped_never_lost(provider: str) -> None:
    settings = SamplerSettings(
        temperature=0.9, top_p=0.95, top_k=40, min_p=0.05, frequency_penalty=0.2, presence_penalty=0.3,
        repetition_penalty=1.1, top_a=0.1, openai_max_tokens=2000, seed=7, reasoning_effort="low",
    )  # fmt: skip
    result = generation_settings(settings, provider)
    dropped = [d.name for d in result.dropped]
    assert sorted([*dropped, *result.sent]) == sorted(SETTING_NAMES)


def test_an_unknown_provider_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="Unknown provider"):
        _map("mistral", temperature=1)


def test_openai_and_anthropic_payloads_carry_the_params_at_the_top_level() -> None:
    payload = {"messages": [{"role": "user", "content": "hi"}]}
    for provider in ("openai", "anthropic"):
        result = _map(provider, temperature=0.5, openai_max_tokens=300)
        body = with_generation_settings(provider, payload, result)
        assert body["temperature"] == 0.5 and body["messages"] == payload["messages"]


def test_the_gemini_payload_carries_them_in_generation_config() -> None:
    payload: dict[str, Any] = {"contents": []}
    body = with_generation_settings("gemini", payload, _map("gemini", temperature=0.5, top_k=20))
    assert body["generationConfig"] == {"temperature": 0.5, "topK": 20}


def test_a_payload_with_nothing_to_send_is_left_as_it_was() -> None:
    payload: dict[str, Any] = {"contents": []}
    assert with_generation_settings("gemini", payload, _map("gemini", min_p=0.1)) == payload


def test_the_json_shape_is_params_and_dropped_with_name_and_reason() -> None:
    out = _map("openai", top_k=5, temperature=1).to_dict()
    assert out == {
        "params": {"temperature": 1},
        "dropped": [{"name": "top_k", "reason": out["dropped"][0]["reason"]}],
    }
