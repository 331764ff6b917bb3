"""The assemble API, the CLI and the preview carry the server's generation settings to the provider."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from presets.sampling import services as sampling_services
from tests.assembly.test_api import post
from tests.assembly.test_cli import DEFAULT, _repo_root, run  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def document() -> dict:
    with open(DEFAULT, encoding="utf-8") as handle:
        return json.load(handle)


def test_the_api_returns_generation_settings_for_the_chosen_provider(
    client, api_token, warm_preset, document
):
    body = post(client, 1001, {**document, "provider": "anthropic"}, api_token).json()
    settings = body["generation_settings"]
    assert set(settings) == {"params", "dropped"}
    assert settings["params"]["top_k"] == 40 and settings["params"]["temperature"] == 1
    assert all(set(d) == {"name", "reason"} for d in settings["dropped"])
    assert "frequency_penalty" in {d["name"] for d in settings["dropped"]}


@pytest.mark.parametrize(
    ("provider", "where"),
    [("openai", None), ("anthropic", None), ("gemini", "generationConfig")],
)
def test_each_providers_payload_carries_the_params(client, api_token, warm_preset, document, provider, where):
    body = post(client, 1001, {**document, "provider": provider}, api_token).json()
    params = body["generation_settings"]["params"]
    payload = body["provider_payload"]
    carried = payload[where] if where else {key: payload[key] for key in params}
    assert carried == params and params


def test_top_k_reaches_anthropic_and_gemini_but_not_openai(client, api_token, warm_preset, document):
    bodies = {
        p: post(client, 1001, {**document, "provider": p}, api_token).json()
        for p in ("openai", "anthropic", "gemini")
    }
    assert "top_k" not in bodies["openai"]["provider_payload"]
    assert bodies["anthropic"]["provider_payload"]["top_k"] == 40
    assert bodies["gemini"]["provider_payload"]["generationConfig"]["topK"] == 40


def test_a_clamped_value_is_explained_in_the_warnings(client, api_token, warm_preset, document):
    body = post(client, 1001, {**document, "provider": "anthropic"}, api_token).json()
    assert any("temperature 1.3" in w and "maximum of 1" in w for w in body["warnings"])


def test_server_overrides_win_in_the_payload(client, api_token, alice, lantern, warm_preset, document):
    sampling_services.sampling_set(
        server=lantern, mode="merged", set_values={"temperature": "0.5", "openai_max_tokens": "300"}, by=alice
    )
    body = post(client, 1001, {**document, "provider": "openai"}, api_token).json()
    assert body["provider_payload"]["temperature"] == 0.5
    assert body["provider_payload"]["max_completion_tokens"] == 300
    assert body["provider_payload"]["top_p"] == 0.9  # still the preset's


def test_server_mode_sends_only_the_servers_values(client, api_token, alice, lantern, warm_preset, document):
    sampling_services.sampling_set(server=lantern, mode="server", set_values={"seed": "11"}, by=alice)
    body = post(client, 1001, {**document, "provider": "gemini"}, api_token).json()
    assert body["generation_settings"]["params"] == {"seed": 11}


def test_without_a_provider_the_settings_are_for_the_servers_provider(
    client, api_token, alice, lantern, warm_preset, document
):
    sampling_services.sampling_set(server=lantern, provider="gemini", by=alice)
    body = post(client, 1001, document, api_token).json()
    assert body["generation_settings"]["params"]["topK"] == 40
    assert "provider_payload" not in body


def test_a_warm_request_with_a_sampling_choice_makes_no_sql_query(
    client, api_token, alice, lantern, warm_preset, document, django_assert_num_queries
):
    sampling_services.sampling_set(server=lantern, mode="merged", set_values={"temperature": "0.5"}, by=alice)
    post(client, 1001, {**document, "provider": "openai"}, api_token)
    with django_assert_num_queries(0):
        body = post(client, 1001, {**document, "provider": "openai"}, api_token).json()
    assert body["generation_settings"]["params"]["temperature"] == 0.5


@pytest.mark.django_db(transaction=True)
def test_a_changed_choice_reaches_the_next_request(client, api_token, alice, lantern, warm_preset, document):
    sampling_services.sampling_set(server=lantern, mode="merged", set_values={"temperature": "0.5"}, by=alice)
    post(client, 1001, {**document, "provider": "openai"}, api_token)
    sampling_services.sampling_set(server=lantern, set_values={"temperature": "0.6"}, by=alice)
    body = post(client, 1001, {**document, "provider": "openai"}, api_token).json()
    assert body["generation_settings"]["params"]["temperature"] == 0.6


def test_the_cli_prints_generation_settings_for_the_chosen_provider(lantern, warm_preset):
    code, out, err = run("--server", str(lantern.id), "--buckets", DEFAULT, "--provider", "gemini", "--json")
    assert code == 0, err
    assert out["generation_settings"]["params"]["topK"] == 40
    assert out["provider_payload"]["generationConfig"] == out["generation_settings"]["params"]


def test_the_preview_shows_the_generation_settings(client, alice, lantern, warm_preset, document):
    client.force_login(alice)
    response = client.post(
        reverse("assembly:preview-render", args=[lantern.id]),
        {"document": json.dumps(document), "provider": "anthropic", "preset": "active"},
    )
    page = response.content.decode()
    assert 'data-testid="generation-settings"' in page
    assert "top_k" in page and "frequency_penalty" in page
