"""The preview page: who may see it and save samples, what it shows, and that it stays inert."""

from __future__ import annotations

import json

from django.urls import reverse

from assembly.bucket_models import SampleBucket


def page(server_id=1001, **params):
    return reverse("assembly:preview", args=[server_id]) + (
        "?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else ""
    )


def render_url(server_id=1001):
    return reverse("assembly:preview-render", args=[server_id])


def save_url(server_id=1001):
    return reverse("assembly:sample-save", args=[server_id])


def test_charlie_cannot_see_the_lantern_preview(client, charlie, lantern):
    client.force_login(charlie)
    assert client.get(page()).status_code == 404
    assert client.post(render_url(), {"document": "{}"}).status_code == 404


def test_an_anonymous_visitor_is_sent_to_sign_in(client, lantern):
    response = client.get(page())
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_bob_the_moderator_sees_the_default_sample_previewed(client, bob):
    client.force_login(bob)
    response = client.get(page())
    assert response.status_code == 200
    html = response.content.decode()
    assert "Mira: Is it... a secret?" in html
    # The server's system prompt is labelled in the admin's words; its tag stays in the tooltip.
    assert 'title="SYSTEM_HUMANIZER_RULES">Server&#x27;s system prompt</span>' in html
    assert "<meter" in html and "<progress" in html
    assert 'style="' not in html


def test_bob_may_not_save_a_sample(client, bob, sample_document):
    client.force_login(bob)
    response = client.post(save_url(), {"name": "mine", "document": json.dumps(sample_document)})
    assert response.status_code == 403
    assert not SampleBucket.objects.exists()


def test_carol_saves_an_edited_sample_and_it_is_audited(client, carol, sample_document):
    from servers.models import AuditEvent

    client.force_login(carol)
    sample_document["history"][-1]["content"] = "Is it a shadow?"
    response = client.post(save_url(), {"name": "Heist night", "document": json.dumps(sample_document)})
    assert response.status_code == 302
    bucket = SampleBucket.objects.get(server_id=1001, name="Heist night")
    assert bucket.document["history"][-1]["content"] == "Is it a shadow?"
    assert AuditEvent.objects.filter(action="sample_bucket.create", actor=carol).exists()
    assert "Mira: Is it a shadow?" in client.get(response["Location"]).content.decode()


def test_bad_json_gets_a_clear_error_and_nothing_is_saved(client, carol):
    client.force_login(carol)
    response = client.post(save_url(), {"name": "broken", "document": '{"history": ['})
    assert response.status_code == 400
    assert "not valid JSON (line 1" in response.content.decode()
    assert not SampleBucket.objects.exists()


def test_a_sample_nested_too_deeply_gets_a_clear_error_and_nothing_is_saved(client, carol):
    client.force_login(carol)
    response = client.post(save_url(), {"name": "deep", "document": "[" * 100_000 + "]" * 100_000})
    assert response.status_code == 400
    assert "nested too deeply" in response.content.decode()
    assert not SampleBucket.objects.exists()


def test_a_schema_error_is_shown_as_one_sentence(client, carol):
    client.force_login(carol)
    response = client.post(
        render_url(), {"document": '{"history": [{"role": "wizard"}]}'}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200  # htmx swaps only 2xx answers: the error is in the partial
    assert "`history[0].role` must be" in response.content.decode()


def test_an_htmx_change_returns_only_the_result_partial(client, bob, sample_document):
    client.force_login(bob)
    response = client.post(
        render_url(),
        {"document": json.dumps(sample_document), "provider": "anthropic"},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="result"')
    assert html.count("<textarea") == 1 and 'id="document"' in html  # the JSON view, out of band
    assert 'id="sample-fields"' not in html  # the fields being edited are left alone
    assert "The anthropic request body" in html


def test_preset_text_is_shown_inert(client, alice, stored_preset):
    client.force_login(alice)
    html = client.get(page()).content.decode()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "Evil &lt;b&gt;node&lt;/b&gt;" in html


def test_the_preview_shows_a_non_active_preset_and_the_native_side_by_side(client, alice, stored_preset):
    from presets.services import preset_deactivate

    preset_deactivate(preset=stored_preset, by=alice)
    client.force_login(alice)
    html = client.get(page(preset=stored_preset.pk)).content.decode()
    assert "preset: tiny-xss" in html
    assert "Native assembly" in html
    assert "Main says hi." in html


def test_charlie_cannot_preview_with_a_preset_of_another_server(
    client, charlie, stored_preset, sample_document
):
    client.force_login(charlie)
    response = client.post(
        render_url(2002),
        {"document": json.dumps(sample_document), "preset": str(stored_preset.pk)},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200  # htmx swaps only 2xx answers: the error is in the partial
    assert "no preset" in response.content.decode()


def test_a_sample_conversation_replaces_the_history_and_starts_the_variables(
    client, carol, lantern, stored_preset
):
    from conversations.services import conversation_create, message_add

    conversation = conversation_create(server=lantern, name="Long night", by=carol)
    message_add(
        conversation=conversation,
        role="user",
        text="Quill counts coins. {{setvar::gold::12}}",
        by=carol,
        speaker="Mira",
    )
    message_add(
        conversation=conversation, role="assistant", text="Twelve, exactly.", by=carol, speaker="Tomori"
    )
    client.force_login(carol)
    html = client.get(page(conversation=conversation.pk)).content.decode()
    assert "Mira: Quill counts coins." in html
    assert "Mira: Is it... a secret?" not in html
    assert "&quot;gold&quot;" in html


def test_an_unknown_conversation_is_a_clear_error(client, carol, lantern):
    client.force_login(carol)
    html = client.get(page(conversation=424242)).content.decode()
    assert "no such sample conversation" in html


def test_carol_deletes_a_sample(client, carol, lantern, sample_document):
    client.force_login(carol)
    client.post(save_url(), {"name": "Old", "document": json.dumps(sample_document)})
    response = client.post(reverse("assembly:sample-delete", args=[1001]), {"name": "Old", "confirmed": "1"})
    assert response.status_code == 302
    assert not SampleBucket.objects.filter(name="Old").exists()


def test_the_preview_form_picks_a_generation_type_and_shows_the_quiet_prompt(client, bob, sample_document):
    client.force_login(bob)
    sample_document["quiet_prompt"] = "Summarise the channel in one line."
    response = client.post(
        render_url(),
        {"document": json.dumps(sample_document), "generation_type": "quiet"},
        HTTP_HX_REQUEST="true",
    )
    assert "Summarise the channel in one line." in response.content.decode()
    page_html = client.get(page(generation_type="quiet")).content.decode()
    assert '<option value="quiet" selected>quiet</option>' in page_html


def test_the_preview_names_where_sillytavern_would_send_otherwise(client, bob, stored_preset):
    client.force_login(bob)
    html = client.get(page()).content.decode()
    assert 'data-testid="sillytavern-differences"' in html
    # the default sample's users speak by name, which SillyTavern 1.18 would leave out
    # (docs/fidelity.md#the-deliberate-differences)
    assert "a channel has many speakers" in html
