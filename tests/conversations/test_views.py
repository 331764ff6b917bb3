"""Sample conversation pages: who may read and write, htmx partials, the op panel."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from conversations import services
from conversations.models import SampleConversation
from conversations.selectors import conversation_variables
from servers.models import AuditEvent


def url(name: str, *args) -> str:
    return reverse(f"conversations:{name}", args=args)


def current_swipe(message):
    return message.swipes.get(is_current=True)


def test_the_conversations_page_lives_where_the_nav_links(lantern):
    assert url("conversations", lantern.id) == f"/servers/{lantern.id}/conversations/"


def test_bob_the_moderator_can_read_the_conversations(client, bob, lantern, dungeon, say):
    say("The cave is dark. {{setvar::hp::30}}")
    client.force_login(bob)
    assert dungeon.name in client.get(url("conversations", lantern.id)).content.decode()
    page = client.get(url("conversation", lantern.id, dungeon.id)).content.decode()
    assert "The cave is dark." in page
    assert "Save ops and replay" not in page


@pytest.mark.parametrize(
    "name, extra",
    [
        ("message-add", ()),
        ("conversation-rename", ()),
        ("conversation-delete", ()),
    ],
)
def test_bob_the_moderator_cannot_change_a_conversation(client, bob, lantern, dungeon, name, extra):
    client.force_login(bob)
    assert (
        client.post(url(name, lantern.id, dungeon.id, *extra), {"text": "x", "name": "y"}).status_code == 403
    )


def test_bob_the_moderator_cannot_create_a_conversation(client, bob, lantern):
    client.force_login(bob)
    assert client.post(url("conversations", lantern.id), {"name": "Mine"}).status_code == 403
    assert not SampleConversation.objects.filter(name="Mine").exists()


def test_bob_the_moderator_cannot_delete_a_message_or_edit_its_ops(client, bob, lantern, dungeon, say):
    message = say("{{setvar::hp::30}}")
    client.force_login(bob)
    assert client.post(url("message-delete", lantern.id, dungeon.id, message.id)).status_code == 403
    data = {"swipe": current_swipe(message).id, "rows": 1, "op-0": "setvar", "key-0": "hp", "value-0": "1"}
    assert client.post(url("ops-save", lantern.id, dungeon.id, message.id), data).status_code == 403
    assert conversation_variables(dungeon) == {"hp": "30"}


def test_charlie_from_another_server_gets_404_everywhere(client, charlie, lantern, dungeon, say):
    message = say("hello")
    client.force_login(charlie)
    assert client.get(url("conversations", lantern.id)).status_code == 404
    assert client.get(url("conversation", lantern.id, dungeon.id)).status_code == 404
    assert client.post(url("message-delete", lantern.id, dungeon.id, message.id)).status_code == 404


def test_charlie_cannot_reach_a_lantern_conversation_through_his_own_server(client, charlie, harbor, dungeon):
    client.force_login(charlie)
    assert client.get(url("conversation", harbor.id, dungeon.id)).status_code == 404


def test_carol_creates_a_conversation_and_lands_on_it(client, carol, lantern):
    client.force_login(carol)
    response = client.post(url("conversations", lantern.id), {"name": "Tavern brawl"})
    conversation = SampleConversation.objects.get(server=lantern, name="Tavern brawl")
    assert response.status_code == 302
    assert response["Location"] == url("conversation", lantern.id, conversation.id)
    assert AuditEvent.objects.filter(action="conversation.create", actor=carol).exists()


def test_carol_adds_a_message_with_htmx_and_gets_the_thread_back(client, carol, lantern, dungeon):
    client.force_login(carol)
    response = client.post(
        url("message-add", lantern.id, dungeon.id),
        {"role": "assistant", "speaker": "Narrator", "text": "A trap! {{addvar::hp::-3}}"},
        HTTP_HX_REQUEST="true",
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="thread"')
    assert "A trap!" in body
    assert "addvar::hp" not in body.split("ops-table")[0]
    assert conversation_variables(dungeon) == {"hp": -3}


def test_without_javascript_adding_a_message_redirects_back_to_it(client, carol, lantern, dungeon):
    client.force_login(carol)
    response = client.post(url("message-add", lantern.id, dungeon.id), {"role": "user", "text": "hello"})
    message = dungeon.messages.get()
    assert response["Location"] == url("conversation", lantern.id, dungeon.id) + f"#m{message.id}"


def test_carol_deletes_a_message_and_the_panel_shows_the_earlier_value(client, carol, lantern, dungeon, say):
    say("{{setvar::hp::30}}")
    bite = say("{{setvar::hp::12}}")
    client.force_login(carol)
    body = client.post(
        url("message-delete", lantern.id, dungeon.id, bite.id), {"confirmed": "1"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    final = body.split('data-testid="final-state"')[1]
    assert '<tr data-key="hp"' in final
    assert '<code class="conv-value">30</code>' in final
    assert ">12<" not in final


def test_carol_edits_adds_and_deletes_ops_in_the_panel(client, carol, lantern, dungeon, say):
    message = say("{{setvar::hp::30}}{{setvar::mood::calm}}{{incvar::turn}}")
    client.force_login(carol)
    data = {
        "swipe": current_swipe(message).id,
        "rows": 4,
        "op-0": "setvar", "key-0": "hp", "value-0": "45",  # edited
        "op-1": "setvar", "key-1": "mood", "value-1": "calm", "delete-1": "1",  # deleted
        "op-2": "incvar", "key-2": "turn", "value-2": "",
        "op-3": "addvar", "key-3": "gold", "value-3": "7",  # added
    }  # fmt: skip
    response = client.post(url("ops-save", lantern.id, dungeon.id, message.id), data, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert current_swipe(message).ops == [
        {"op": "setvar", "key": "hp", "value": "45"},
        {"op": "incvar", "key": "turn"},
        {"op": "addvar", "key": "gold", "value": "7"},
    ]
    assert conversation_variables(dungeon) == {"hp": "45", "turn": 1, "gold": 7}
    assert AuditEvent.objects.filter(action="conversation.ops_edit", actor=carol).exists()


def test_the_op_panel_refuses_a_proto_path_with_a_clear_message(client, carol, lantern, dungeon, say):
    message = say("{{setvar::npcs::{}}}")
    client.force_login(carol)
    data = {
        "swipe": current_swipe(message).id,
        "rows": 1,
        "op-0": "setvar",
        "key-0": "npcs.__proto__.x",
        "value-0": "1",
    }
    body = client.post(
        url("ops-save", lantern.id, dungeon.id, message.id), data, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "uses the forbidden segment &#x27;__proto__&#x27;" in body
    assert current_swipe(message).ops == [{"op": "setvar", "key": "npcs", "value": "{}"}]


def test_carol_switches_swipes_from_the_page(client, carol, lantern, dungeon, say):
    reply = say("{{setvar::weapon::sword}}")
    first = current_swipe(reply)
    client.force_login(carol)
    client.post(url("swipe-add", lantern.id, dungeon.id, reply.id), {"text": "{{setvar::weapon::axe}}"})
    assert conversation_variables(dungeon) == {"weapon": "axe"}
    client.post(url("swipe-select", lantern.id, dungeon.id, reply.id, first.id))
    assert conversation_variables(dungeon) == {"weapon": "sword"}


def test_preset_html_in_a_message_is_shown_as_text(client, carol, lantern, dungeon, say):
    say('<script>alert(1)</script><img src=x onerror="alert(2)">')
    client.force_login(carol)
    body = client.get(url("conversation", lantern.id, dungeon.id)).content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_a_swipe_of_another_message_cannot_be_selected_through_this_one(client, carol, lantern, dungeon, say):
    one = say("one")
    two = say("two")
    client.force_login(carol)
    foreign = current_swipe(two).id
    assert client.post(url("swipe-select", lantern.id, dungeon.id, one.id, foreign)).status_code == 404


def test_a_long_conversation_shows_its_latest_messages_and_replays_them_all(client, bob, lantern, alice):
    lines = [
        json.dumps({"name": "N", "is_user": False, "mes": f"turn {n} {{{{incvar::turn}}}}"})
        for n in range(1, 106)
    ]
    conversation, _ = services.conversation_import(
        server=lantern, name="Long", data="\n".join(lines), by=alice
    )
    client.force_login(bob)
    page = client.get(url("conversation", lantern.id, conversation.id)).content.decode()
    assert "5 earlier messages not shown" in page
    assert "turn 5<" not in page and "turn 6<" in page
    assert (
        '<tr data-key="turn"><th scope="row"><code>turn</code></th><td><code class="conv-value">105</code>'
        in page
    )
    everything = client.get(url("conversation", lantern.id, conversation.id) + "?all=1").content.decode()
    assert "turn 1<" in everything


def test_an_op_form_naming_no_real_swipe_is_a_404_not_a_crash(client, carol, lantern, dungeon, say):
    message = say("hello")
    client.force_login(carol)
    response = client.post(url("ops-save", lantern.id, dungeon.id, message.id), {"swipe": "abc", "rows": 0})
    assert response.status_code == 404


def test_deleting_a_message_asks_first_and_names_its_variable_changes(client, carol, lantern, dungeon, say):
    bite = say("{{setvar::hp::12}}")
    client.force_login(carol)
    asked = client.post(url("message-delete", lantern.id, dungeon.id, bite.id), HTTP_HX_REQUEST="true")
    assert asked["HX-Retarget"] == "#main" and "variable changes go with it" in asked.content.decode()
    assert dungeon.messages.filter(pk=bite.pk).exists()


def test_deleting_a_swipe_asks_first_and_deletes_only_once_confirmed(client, carol, lantern, dungeon, say):
    reply = say("{{setvar::weapon::sword}}")
    client.force_login(carol)
    client.post(url("swipe-add", lantern.id, dungeon.id, reply.id), {"text": "{{setvar::weapon::axe}}"})
    axe = current_swipe(reply)
    delete = url("swipe-delete", lantern.id, dungeon.id, reply.id, axe.id)

    asked = client.post(delete)
    assert "Delete swipe 2 of message" in asked.content.decode()
    assert "the messages after it see its values" in asked.content.decode()
    assert reply.swipes.filter(pk=axe.pk).exists()
    assert conversation_variables(dungeon) == {"weapon": "axe"}

    client.post(delete, {"confirmed": "1"})
    assert not reply.swipes.filter(pk=axe.pk).exists()
    assert conversation_variables(dungeon) == {"weapon": "sword"}
