"""The preview starts from a sample conversation: its visible messages as history, its replayed
variables as the render's starting state (docs/conversations.md)."""

from __future__ import annotations

import json

import pytest
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


LORE = {
    "entries": {
        "0": {"key": ["lantern"], "comment": "Lantern", "content": "The lantern stays lit.", "sticky": 3},
        "1": {"key": ["bell"], "comment": "Bell", "content": "The bell rings.", "cooldown": 3},
    }
}


def _walk(say) -> None:
    for text in ("hello", "a quiet road", "a lantern and a bell", "the bell again", "still walking", "dawn"):
        say(text, role="user", speaker="Rin")


@pytest.fixture
def road(alice, lantern, say) -> None:
    """The road lorebook imported by alice, and the six-message walk said in the conversation."""
    from lorebooks import services as lorebook_services  # only the World Info tests need a lorebook

    lorebook_services.lorebook_import(
        server=lantern, raw=json.dumps(LORE).encode(), filename="Road.json", by=alice
    )
    _walk(say)


def _world_info(client, server_id: int, conversation: int, message: int) -> str:
    page = client.get(
        reverse("assembly:preview", args=[server_id]), {"conversation": conversation, "message": message}
    ).content.decode()
    return page[page.index('data-testid="world-info"') :]


def test_the_preview_at_a_message_keeps_a_sticky_entry_from_message_3_within_its_window(
    client, carol, lantern, dungeon, road
):
    client.force_login(carol)
    at_5 = _world_info(client, lantern.id, dungeon.pk, 5)
    assert '<td data-label="Entry">Lantern</td>' in at_5 and '<td data-label="Effect">sticky</td>' in at_5
    assert 'data-testid="wi-replayed"' in at_5 and "4 earlier messages" in at_5
    at_6 = _world_info(client, lantern.id, dungeon.pk, 6)
    assert (
        "The lantern stays lit." not in at_6
        and '<td data-label="Effect">sticky</td>' not in at_6.split("Timed effects")[0]
    )


def test_the_preview_shows_a_cooldown_from_the_conversation_as_skipped_until_its_message(
    client, carol, lantern, dungeon, road
):
    client.force_login(carol)
    at_4 = _world_info(client, lantern.id, dungeon.pk, 4)
    assert "cooldown until message 6" in at_4
    assert "The bell rings." not in at_4


def test_each_message_of_the_thread_links_to_the_preview_at_that_message(
    client, carol, lantern, dungeon, say
):
    say("the first words")
    say("the second words")
    client.force_login(carol)
    page = client.get(reverse("conversations:conversation", args=[lantern.id, dungeon.pk])).content.decode()
    assert f"preview/?conversation={dungeon.pk}&amp;message=2" in page
    preview = client.get(
        reverse("assembly:preview", args=[lantern.id]), {"conversation": dungeon.pk, "message": 1}
    ).content.decode()
    assert 'data-testid="conversation-message"' in preview
    assert "the first words" in preview and "the second words" not in preview
