"""Assembling from a stored channel conversation (docs/channels.md#assembling-from-the-stored-conversation)."""

from __future__ import annotations

import pytest

from core.actors import Agent
from devtools.factories import make_preset
from presets.services import preset_import

from .conftest import TAVERN

pytestmark = pytest.mark.django_db

WEATHER = "{{setvar::weather::rain}}Weather {{getvar::weather}}; hp {{getvar::hp}}; turn {{getvar::turn}}."


@pytest.fixture
def weather_preset(lantern):
    raw = make_preset(("weather", WEATHER, True))
    return preset_import(server=lantern, raw=raw, filename="weather.json", by=Agent("test")).preset


def assemble(bot, **body):
    response = bot.call("POST", "assemble", {"conversation": TAVERN, **body})
    assert response.status_code == 200, response.content
    return response.json()


def contents(answer):
    return [m["content"] for m in answer["messages"]]


def test_the_stored_messages_are_the_history_with_each_users_name(bot, weather_preset):
    bot.post("1000", "Hello, keeper.", role="user")
    bot.post("1001", "Welcome, traveller. {{setvar::hp::50}}")
    answer = assemble(bot)
    assert "Mira: Hello, keeper." in contents(answer)
    assert "Welcome, traveller." in " ".join(contents(answer))
    assert "{{setvar" not in " ".join(contents(answer))
    assert "Weather rain; hp 50; turn ." in " ".join(contents(answer))


def test_what_the_render_writes_is_kept_as_the_channels_variables_and_returned(bot, weather_preset):
    bot.post("1000", "{{setvar::hp::50}}")
    answer = assemble(bot)
    assert answer["variables"] == {"hp": "50", "weather": "rain"}
    assert bot.variables() == {"hp": "50", "weather": "rain"}


def test_a_preset_write_survives_a_deletion_while_op_keys_replay(bot, weather_preset):
    bot.post("1000", "{{setvar::hp::50}}")
    bot.post("1001", "{{decvar::hp}}")
    assemble(bot)
    bot.call("DELETE", f"channels/{TAVERN}/messages/1001")
    assert bot.variables() == {"hp": "50", "weather": "rain"}


def test_regenerate_ends_the_history_before_the_reply_and_starts_from_the_state_before_it(
    bot, weather_preset
):
    bot.post("1000", "{{setvar::hp::50}}{{setvar::turn::1}}")
    bot.post("1001", "Tell me more.", role="user")
    bot.post("1002", "A dragon! {{setvar::hp::20}}{{incvar::turn}}")
    answer = assemble(bot, regenerate="1002")
    text = " ".join(contents(answer))
    assert "A dragon!" not in text and "Mira: Tell me more." in text
    assert "Weather rain; hp 50; turn 1." in text
    swiped = bot.call(
        "POST", f"channels/{TAVERN}/messages/1002/swipes", {"content": "A pixie. {{incvar::turn}}"}
    )
    assert swiped.json()["variables"] == {"hp": "50", "turn": 2, "weather": "rain"}


def test_a_document_with_both_conversation_and_history_is_refused(bot):
    bot.post("1000", "hi")
    response = bot.call("POST", "assemble", {"conversation": TAVERN, "history": []})
    assert response.status_code == 400
    assert "`history`" in response.json()["error"]


def test_an_unknown_channel_or_regenerated_message_is_404(bot):
    assert bot.call("POST", "assemble", {"conversation": "999"}).status_code == 404
    bot.post("1000", "hi")
    assert bot.call("POST", "assemble", {"conversation": TAVERN, "regenerate": "5"}).status_code == 404


def test_regenerate_without_conversation_is_refused(bot):
    response = bot.call("POST", "assemble", {"regenerate": "5"})
    assert response.status_code == 400 and "`regenerate`" in response.json()["error"]


def test_another_servers_token_cannot_assemble_from_this_channel(bot, harbor_bot):
    bot.post("1000", "secret {{setvar::key::lantern}}")
    assert harbor_bot.call("POST", "assemble", {"conversation": TAVERN}).status_code == 404


def test_a_cards_first_message_posted_first_bootstraps_its_ops(bot):
    bot.post("999", "*The inn is quiet.* {{setvar::hp::100}}{{setvar::gold::3}}")
    assert bot.variables() == {"hp": "100", "gold": "3"}
    assert bot.conversation()["messages"][0]["content"] == "*The inn is quiet.*"


def test_an_edit_after_an_assembly_is_in_the_next_assemblys_history(bot, weather_preset):
    bot.post("1000", "The door is red.")
    assert "The door is red." in " ".join(contents(assemble(bot)))
    bot.call("PATCH", f"channels/{TAVERN}/messages/1000", {"content": "The door is blue."})
    text = " ".join(contents(assemble(bot)))
    assert "The door is blue." in text and "red" not in text


def test_the_stored_conversation_gives_the_prompt_the_same_history_in_the_body_gives(bot, weather_preset):
    from conversations.channels.selectors import stored_chat

    bot.post("1000", "Hello, keeper.", role="user")
    bot.post("1001", "Welcome, traveller. {{setvar::hp::50}}")
    bot.post("1002", "What is the weather?", role="user")
    first, again = assemble(bot, seed=3), assemble(bot, seed=3)  # the second from the process's copy
    stored = stored_chat(bot.server, int(TAVERN))
    assert stored is not None
    body = {"history": stored.history, "variables": bot.variables(), "seed": 3}
    inline = bot.call("POST", "assemble", {**body, "channel": TAVERN}).json()
    assert contents(first) == contents(again) == contents(inline)
    assert "Mira: What is the weather?" in contents(first)
