"""The preview starts from a sample conversation: its visible messages as history, its replayed
variables as the render's starting state (SPEC §6)."""

from __future__ import annotations

import json

from django.urls import reverse

from assembly.selectors import default_document
from conversations import services


def render(client, server_id: int, **fields):
    data = {"document": json.dumps(default_document()), "preset": "native", **fields}
    return client.post(reverse("assembly:preview-render", args=[server_id]), data, HTTP_HX_REQUEST="true")


def test_choosing_a_conversation_in_the_preview_form_uses_its_history_and_variables(
    client, carol, lantern, dungeon, say
):
    say("We storm the gate.", role="user", speaker="Rin")
    say("The gate holds. {{setvar::hp::30}}")
    client.force_login(carol)
    body = render(client, lantern.id, conversation=str(dungeon.pk)).content.decode()
    assert "Rin: We storm the gate." in body
    assert "The gate holds." in body
    assert "&quot;hp&quot;: &quot;30&quot;" in body


def test_after_a_message_is_deleted_the_preview_starts_from_the_replayed_state(
    client, carol, lantern, dungeon, say
):
    say("The gate holds. {{setvar::hp::30}}")
    arrow = say("An arrow finds you. {{setvar::hp::12}}")
    services.message_delete(message=arrow, by=carol)
    client.force_login(carol)
    body = render(client, lantern.id, conversation=str(dungeon.pk)).content.decode()
    assert "&quot;hp&quot;: &quot;30&quot;" in body
    assert "An arrow finds you." not in body


def test_charlie_cannot_preview_with_a_lantern_conversation_through_his_own_server(
    client, charlie, harbor, dungeon, say
):
    say("secret plans {{setvar::code::1234}}")
    client.force_login(charlie)
    body = render(client, harbor.id, conversation=str(dungeon.pk)).content.decode()
    assert "secret plans" not in body
    assert "1234" not in body
