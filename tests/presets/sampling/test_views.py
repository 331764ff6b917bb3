"""The sampling panel on the preset page and its form: admins change it, everyone else reads it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from presets.models import ServerSampling

pytestmark = pytest.mark.django_db


def _url(server) -> str:
    return reverse("presets:sampling", args=[server.id])


def _form(**fields) -> dict[str, str]:
    return {"mode": "merged", "provider": "anthropic", "value-temperature": "0.7", **fields}


def test_the_preset_page_shows_the_effective_values_for_the_servers_provider(
    client, bob, warm_preset
) -> None:
    client.force_login(bob)
    page = client.get(
        reverse("presets:detail", args=[warm_preset.server_id, warm_preset.pk])
    ).content.decode()
    assert 'data-testid="sampling-panel"' in page
    assert "max_completion_tokens" in page  # OpenAI, the default provider
    assert "OpenAI chat completions has no top_k parameter" in page
    assert 'data-testid="sampling-form"' not in page  # bob reads only


def test_alice_sees_the_form_on_the_preset_page(client, alice, warm_preset) -> None:
    client.force_login(alice)
    page = client.get(
        reverse("presets:detail", args=[warm_preset.server_id, warm_preset.pk])
    ).content.decode()
    assert 'data-testid="sampling-form"' in page


def test_alices_form_without_javascript_saves_and_returns_to_the_preset_page(
    client, alice, warm_preset
) -> None:
    client.force_login(alice)
    back = reverse("presets:detail", args=[warm_preset.server_id, warm_preset.pk])
    response = client.post(_url(warm_preset.server), _form(next=back, preset=str(warm_preset.pk)))
    assert response.status_code == 302 and response.url == back
    row = ServerSampling.objects.get(server_id=warm_preset.server_id)
    assert (row.mode, row.provider, row.values) == ("merged", "anthropic", {"temperature": 0.7})
    page = client.get(back).content.decode()
    assert "Anthropic messages" in page and "top_k" in page


def test_under_htmx_the_panel_is_swapped_in_place(client, alice, warm_preset) -> None:
    client.force_login(alice)
    response = client.post(_url(warm_preset.server), _form(), HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200 and body.lstrip().startswith('<section class="card sampling"')
    assert "Sampling choice saved." in body


def test_a_bad_value_is_refused_in_the_form_with_one_sentence(client, alice, lantern) -> None:
    client.force_login(alice)
    response = client.post(_url(lantern), _form(**{"value-temperature": "hot"}))
    assert response.status_code == 400
    assert "temperature must be a number" in response.content.decode()
    assert not ServerSampling.objects.exists()


def test_a_blank_field_clears_that_server_value(client, alice, lantern) -> None:
    client.force_login(alice)
    client.post(_url(lantern), _form(**{"value-seed": "5"}))
    client.post(_url(lantern), _form(**{"value-seed": ""}))
    assert ServerSampling.objects.get(server=lantern).values == {"temperature": 0.7}


@pytest.mark.parametrize("persona", ["bob", "carol"])
def test_moderators_and_support_read_the_sampling_page_but_cannot_change_it(
    client, persona, request, lantern
):
    client.force_login(request.getfixturevalue(persona))
    assert client.get(_url(lantern)).status_code == 200
    assert client.post(_url(lantern), _form()).status_code == 403
    assert not ServerSampling.objects.exists()


def test_charlie_cannot_see_another_servers_sampling(client, charlie, lantern) -> None:
    client.force_login(charlie)
    assert client.get(_url(lantern)).status_code == 404
    assert client.post(_url(lantern), _form()).status_code == 404


def test_the_sampling_page_without_an_active_preset_says_only_server_values_apply(
    client, alice, lantern
) -> None:
    client.force_login(alice)
    page = client.get(_url(lantern)).content.decode()
    assert "only the server's own values can apply" in page
