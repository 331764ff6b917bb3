"""Sample conversations: saving extracts, structural changes replay (docs/conversations.md), every change is
audited."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conversations import services
from conversations.selectors import (
    conversation_history,
    conversation_thread,
    conversation_variables,
    preview_inputs,
)
from core.actors import SYSTEM
from engine.macros.replay import make_op
from servers.models import AuditEvent
from tests.present import present


def current_swipe(message):
    return message.swipes.get(is_current=True)


def test_a_new_message_extracts_its_ops_and_shows_clean_text(dungeon, say):
    message = say("You enter the cave. {{setvar::hp::30}}")
    swipe = current_swipe(message)
    assert swipe.text == "You enter the cave."
    assert swipe.ops == [{"op": "setvar", "key": "hp", "value": "30"}]
    assert conversation_variables(dungeon) == {"hp": "30"}


def test_a_new_message_extracts_against_the_state_the_earlier_messages_built(dungeon, say):
    say("{{setvar::hp::30}}")
    say("A goblin bites. {{addvar::hp::-5}} {{setvar::last_hp::{{getvar::hp}}}}")
    assert conversation_variables(dungeon) == {"hp": 25, "last_hp": "25"}


def test_deleting_a_message_that_set_hp_brings_back_the_value_an_earlier_message_gave(dungeon, say, carol):
    say("{{setvar::hp::30}}")
    bite = say("{{setvar::hp::12}}")
    services.message_delete(message=bite, by=carol)
    assert conversation_variables(dungeon) == {"hp": "30"}


def test_deleting_the_only_message_that_mentions_a_key_removes_the_key(dungeon, say, carol):
    say("{{setvar::hp::30}}")
    quest = say("{{setvar::quest::cave}}")
    services.message_delete(message=quest, by=carol)
    assert conversation_variables(dungeon) == {"hp": "30"}


def test_deleting_a_message_replays_later_relative_ops_from_the_new_start(dungeon, say, carol):
    say("{{setvar::gold::10}}")
    bonus = say("{{addvar::gold::5}}")
    say("{{addvar::gold::1}}")
    services.message_delete(message=bonus, by=carol)
    assert conversation_variables(dungeon) == {"gold": 11}


def test_a_key_that_no_message_touches_again_stays_as_the_last_writer_left_it(dungeon, say, carol):
    say("{{setvar::mood::calm}}{{setvar::hp::30}}")
    hit = say("{{setvar::hp::20}}")
    services.message_delete(message=hit, by=carol)
    assert conversation_variables(dungeon)["mood"] == "calm"


def test_a_new_swipe_extracts_against_the_messages_before_it_and_becomes_current(dungeon, say, carol):
    say("{{setvar::hp::30}}")
    reply = say("Ouch. {{addvar::hp::-10}}")
    say("{{setvar::later::1}}")
    swipe, _ = services.swipe_add(message=reply, text="Dodged! {{setvar::dodged::{{getvar::hp}}}}", by=carol)
    assert swipe.is_current
    assert swipe.ops == [{"op": "setvar", "key": "dodged", "value": "30"}]
    assert conversation_variables(dungeon) == {"hp": "30", "dodged": "30", "later": "1"}


def test_switching_back_to_the_first_swipe_replays_its_ops(dungeon, say, carol):
    say("{{setvar::hp::30}}")
    reply = say("Ouch. {{addvar::hp::-10}}")
    first = current_swipe(reply)
    services.swipe_add(message=reply, text="Dodged!", by=carol)
    assert conversation_variables(dungeon) == {"hp": "30"}
    services.swipe_select(swipe=first, by=carol)
    assert conversation_variables(dungeon) == {"hp": 20}


def test_deleting_the_current_swipe_makes_the_previous_one_current_and_replays(dungeon, say, carol):
    reply = say("{{setvar::weapon::sword}}")
    swipe, _ = services.swipe_add(message=reply, text="{{setvar::weapon::axe}}", by=carol)
    assert conversation_variables(dungeon) == {"weapon": "axe"}
    services.swipe_delete(swipe=swipe, by=carol)
    assert current_swipe(reply).text == ""
    assert conversation_variables(dungeon) == {"weapon": "sword"}


def test_the_only_swipe_of_a_message_cannot_be_deleted(say, carol):
    reply = say("hello")
    with pytest.raises(services.ConversationError, match="at least one swipe"):
        services.swipe_delete(swipe=current_swipe(reply), by=carol)


def test_editing_a_message_never_extracts_the_macros_typed_into_it(dungeon, say, carol):
    message = say("{{setvar::hp::30}}")
    services.message_edit(message=message, text="Now {{setvar::hp::1}}", by=carol)
    assert current_swipe(message).text == "Now {{setvar::hp::1}}"
    assert conversation_variables(dungeon) == {"hp": "30"}


def test_continuing_a_message_appends_text_and_ops_after_the_existing_ones(dungeon, say, carol):
    message = say("The chest opens. {{setvar::gold::10}}")
    services.message_continue(
        message=message, text=" Inside: more coins. {{addvar::gold::{{getvar::gold}}}}", by=carol
    )
    swipe = current_swipe(message)
    assert swipe.text == "The chest opens. Inside: more coins."
    assert [op["op"] for op in swipe.ops] == ["setvar", "addvar"]
    assert conversation_variables(dungeon) == {"gold": 20}


def test_continuing_a_middle_message_extracts_against_the_state_before_the_later_messages(
    dungeon, say, carol
):
    first = say("{{setvar::hp::30}}")
    say("{{setvar::hp::1}}")
    services.message_continue(message=first, text="{{setvar::seen::{{getvar::hp}}}}", by=carol)
    assert conversation_variables(dungeon) == {"hp": "1", "seen": "30"}


def test_editing_ops_in_the_panel_replays_the_conversation(dungeon, say, carol):
    say("{{setvar::hp::30}}")
    hit = say("{{addvar::hp::-10}}")
    ops = [make_op("addvar", "hp", "-25"), make_op("setvar", "poisoned", "yes")]
    services.swipe_set_ops(swipe=current_swipe(hit), ops=ops, by=carol)
    assert conversation_variables(dungeon) == {"hp": 5, "poisoned": "yes"}


def test_deleting_every_op_of_a_message_forgets_what_it_set(dungeon, say, carol):
    say("{{setvar::hp::30}}")
    hit = say("{{setvar::hp::2}}")
    services.swipe_set_ops(swipe=current_swipe(hit), ops=[], by=carol)
    assert conversation_variables(dungeon) == {"hp": "30"}


def test_json_state_is_changed_by_path_and_deleting_the_change_restores_it(dungeon, say, carol):
    say('{{setvar::npcs::{"alice":{"hp":10},"bob":{"hp":4}}}}')
    hurt = say("{{setvar::npcs.alice.hp::3}}{{addvar::npcs.bob.hp::2}}")
    assert conversation_variables(dungeon) == {"npcs": '{"alice":{"hp":3},"bob":{"hp":6}}'}
    services.message_delete(message=hurt, by=carol)
    assert conversation_variables(dungeon) == {"npcs": '{"alice":{"hp":10},"bob":{"hp":4}}'}


def test_the_thread_shows_each_messages_state_and_what_it_changed(dungeon, say):
    say("{{setvar::hp::30}}{{setvar::mood::calm}}")
    say("{{setvar::hp::20}}{{deletevar::mood}}")
    thread = conversation_thread(dungeon)
    second = thread.messages[1]
    assert [(row.key, row.text, row.changed) for row in second.variables] == [("hp", "20", True)]
    assert second.removed == ("mood",)


def test_history_for_the_preview_is_the_visible_text_of_the_current_swipes(dungeon, say, lantern):
    say("Hi there {{setvar::hp::30}}", role="user", speaker="Rin")
    reply = say("Welcome.")
    services.swipe_add(message=reply, text="Go away.", by=SYSTEM)
    history, variables = present(preview_inputs(lantern.id, dungeon.id))
    assert [(m["role"], m["name"], m["content"]) for m in history] == [
        ("user", "Rin", "Hi there"),
        ("assistant", "Narrator", "Go away."),
    ]
    assert variables == {"hp": "30"}
    assert conversation_history(conversation_thread(dungeon)) == history


def test_preview_inputs_never_serve_another_servers_conversation(dungeon, harbor):
    assert preview_inputs(harbor.id, dungeon.id) is None


def test_every_change_is_audited_with_the_variables_it_changed(dungeon, say, carol):
    say("{{setvar::hp::30}}")
    hit = say("{{setvar::hp::12}}")
    services.message_delete(message=hit, by=carol)
    event = AuditEvent.objects.filter(action="conversation.message_delete").get()
    assert event.actor == carol
    assert event.detail["variables"] == {"hp": "30"}


def test_two_conversations_of_a_server_cannot_share_a_name(lantern, dungeon, alice):
    with pytest.raises(services.ConversationError, match="already has a conversation named"):
        services.conversation_create(server=lantern, name="Dungeon run", by=alice)


def test_the_same_name_is_fine_on_another_server(dungeon, harbor, charlie):
    assert services.conversation_create(server=harbor, name="Dungeon run", by=charlie).pk != dungeon.pk


def test_a_message_role_must_be_user_or_assistant(dungeon, alice):
    with pytest.raises(services.ConversationError, match="user or assistant"):
        services.message_add(conversation=dungeon, role="system", text="x", by=alice)


def test_clock_macros_in_a_value_read_the_messages_own_time(dungeon, alice):
    moment = datetime(2026, 3, 14, 9, 26, tzinfo=UTC)
    services.message_add(
        conversation=dungeon,
        role="assistant",
        text="{{setvar::when::{{isodate}}}}",
        timestamp=moment,
        by=alice,
    )
    assert conversation_variables(dungeon) == {"when": "2026-03-14"}
