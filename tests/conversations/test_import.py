"""Importing a SillyTavern chat file (.jsonl) as a sample conversation, extracted as if saved in order."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from conversations import services
from conversations.selectors import conversation_thread, conversation_variables
from conversations.st_chat import ChatFileError, read_st_chat


def chat_file(*messages: dict) -> str:
    header = {"user_name": "Rin", "character_name": "Narrator", "chat_metadata": {}}
    return "\n".join(json.dumps(line) for line in (header, *messages))


def line(mes: str, *, user: bool = False, **extra) -> dict:
    return {
        "name": "Rin" if user else "Narrator",
        "is_user": user,
        "send_date": "November 21, 2026 8:07pm",
        "mes": mes,
        **extra,
    }


def test_an_st_chat_becomes_messages_with_roles_speakers_and_times():
    chat = read_st_chat(chat_file(line("Hello", user=True), line("Welcome.")), max_messages=10)
    assert [(m.role, m.speaker) for m in chat.messages] == [("user", "Rin"), ("assistant", "Narrator")]
    assert chat.messages[0].timestamp == datetime(2026, 11, 21, 20, 7, tzinfo=UTC)


def test_system_lines_are_skipped_and_counted():
    chat = read_st_chat(chat_file(line("note", is_system=True), line("Hi")), max_messages=10)
    assert len(chat.messages) == 1
    assert chat.warnings == ("1 system message skipped.",)


def test_a_file_that_is_not_a_chat_is_refused_with_its_line_number():
    with pytest.raises(ChatFileError, match="Line 2 of the chat file is not JSON"):
        read_st_chat('{"user_name": "x"}\nnot json', max_messages=10)


def test_a_chat_longer_than_the_limit_is_refused():
    with pytest.raises(ChatFileError, match="more than 1 messages"):
        read_st_chat(chat_file(line("a"), line("b")), max_messages=1)


def test_importing_extracts_every_message_in_order(lantern, alice):
    data = chat_file(
        line("Start. {{setvar::hp::30}}"),
        line("Hit! {{addvar::hp::-5}} {{setvar::seen::{{getvar::hp}}}}"),
    )
    conversation, _ = services.conversation_import(server=lantern, name="Imported", data=data, by=alice)
    assert conversation_variables(conversation) == {"hp": 25, "seen": "25"}
    assert [view.text for view in conversation_thread(conversation).messages] == ["Start.", "Hit!"]


def test_each_swipe_is_extracted_against_the_earlier_messages_and_the_file_picks_the_current_one(
    lantern, alice
):
    data = chat_file(
        line("{{setvar::hp::30}}"),
        line(
            "Dodge.",
            swipes=["Ouch {{addvar::hp::-10}}", "Dodge. {{setvar::dodged::{{getvar::hp}}}}"],
            swipe_id=1,
        ),
    )
    conversation, _ = services.conversation_import(server=lantern, name="Swipes", data=data, by=alice)
    second = conversation_thread(conversation).messages[1]
    assert (second.swipe_number, len(second.swipes)) == (2, 2)
    assert second.swipes[0].ops == [{"op": "addvar", "key": "hp", "value": "-10"}]
    assert conversation_variables(conversation) == {"hp": "30", "dodged": "30"}


def test_ops_a_luker_chat_recorded_are_kept_before_the_texts_own(lantern, alice):
    data = chat_file(
        line("Already clean.", extra={"var_ops": [{"op": "setvar", "key": "hp", "value": "50"}]})
    )
    conversation, _ = services.conversation_import(server=lantern, name="Luker", data=data, by=alice)
    assert conversation_variables(conversation) == {"hp": "50"}


def test_carol_imports_a_chat_file_from_the_page(client, carol, lantern):
    client.force_login(carol)
    upload = SimpleUploadedFile("siege.jsonl", chat_file(line("{{setvar::hp::9}}")).encode())
    response = client.post(reverse("conversations:conversation-import", args=[lantern.id]), {"chat": upload})
    conversation = lantern.sample_conversations.get(name="siege")
    assert response["Location"] == reverse("conversations:conversation", args=[lantern.id, conversation.id])
    assert conversation_variables(conversation) == {"hp": "9"}


def test_bob_the_moderator_cannot_import(client, bob, lantern):
    client.force_login(bob)
    upload = SimpleUploadedFile("siege.jsonl", chat_file(line("x")).encode())
    assert (
        client.post(
            reverse("conversations:conversation-import", args=[lantern.id]), {"chat": upload}
        ).status_code
        == 403
    )
