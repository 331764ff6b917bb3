"""docs/assembly.md#tokens: the server picks its provider (the sampling choice) and its tokenizer; counts are
exact where the tokenizer ships offline (OpenAI's) and labelled estimates otherwise."""

from __future__ import annotations

from html import unescape

from django.urls import reverse

from presets.sampling.services import sampling_set
from servers.models import AuditEvent, Server

from .test_api import post


def choose_tokenizer(client, user, encoding):
    client.force_login(user)
    return client.post(reverse("servers:tokenizer", args=[1001]), {"encoding": encoding})


def test_alice_chooses_the_cl100k_tokenizer_and_it_is_audited(client, alice):
    response = choose_tokenizer(client, alice, "cl100k_base")
    assert response.status_code == 302
    assert Server.objects.get(pk=1001).token_encoding == "cl100k_base"
    event = AuditEvent.objects.filter(server_id=1001, action="server.tokenizer").get()
    assert event.actor == alice
    assert event.detail == {"before": "o200k_base", "after": "cl100k_base"}


def test_bob_the_moderator_may_not_change_the_tokenizer(client, bob):
    assert choose_tokenizer(client, bob, "cl100k_base").status_code == 403
    assert Server.objects.get(pk=1001).token_encoding == "o200k_base"


def test_an_unknown_tokenizer_is_refused_and_nothing_changes(client, alice):
    assert choose_tokenizer(client, alice, "llama3").status_code == 302
    assert Server.objects.get(pk=1001).token_encoding == "o200k_base"
    assert not AuditEvent.objects.filter(action="server.tokenizer").exists()


def test_counts_for_an_openai_server_are_exact(client, api_token, sample_document):
    tokens = post(client, 1001, sample_document, api_token).json()["tokens"]
    assert (tokens["exact"], tokens["provider"], tokens["encoding"]) == (True, "openai", "o200k_base")


def test_counts_for_a_server_sending_to_anthropic_are_labelled_estimates_with_its_tokenizer(
    client, alice, lantern, api_token, sample_document
):
    sampling_set(server=lantern, provider="anthropic", by=alice)
    choose_tokenizer(client, alice, "cl100k_base")
    tokens = post(client, 1001, sample_document, api_token).json()["tokens"]
    assert (tokens["exact"], tokens["provider"], tokens["encoding"]) == (False, "anthropic", "cl100k_base")


def test_a_requested_provider_and_encoding_win_over_the_servers_choice(
    client, alice, lantern, api_token, sample_document
):
    sampling_set(server=lantern, provider="gemini", by=alice)
    choose_tokenizer(client, alice, "cl100k_base")
    body = {"buckets": sample_document, "provider": "openai", "encoding": "o200k_base"}
    tokens = post(client, 1001, body, api_token).json()["tokens"]
    assert (tokens["exact"], tokens["provider"], tokens["encoding"]) == (True, "openai", "o200k_base")


def test_the_preview_labels_the_estimate(client, alice, lantern):
    sampling_set(server=lantern, provider="gemini", by=alice)
    client.force_login(alice)
    html = unescape(client.get(reverse("assembly:preview", args=[1001])).content.decode())
    # In the admin's words, the tokenizer's own name kept in a tooltip for support staff.
    assert (
        'for gemini, <span title="o200k_base">OpenAI\'s current tokenizer (GPT-4o and later)</span>, estimate'
        in html
    )


def test_the_server_page_shows_the_tokenizer(client, alice):
    choose_tokenizer(client, alice, "cl100k_base")
    html = unescape(client.get(reverse("servers:server", args=[1001])).content.decode())
    assert '<strong title="cl100k_base">OpenAI\'s older tokenizer (GPT-4, GPT-3.5)</strong>' in html
