"""The example bot on a stored channel conversation (docs/bot.md, "Stored conversations"): it
forwards what happens in the channel, assembles with `conversation`, regenerates on 🔁 by the asker
and switches swipes on ◀ ▶. Run against the real app (in process) and a recording model endpoint on
127.0.0.1 that streams the next of its set answers; Discord is a list of the channel's messages."""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conversations.models import ChannelMessage
from core.actors import Agent
from devtools.factories import make_preset
from presets.services import preset_import
from tests.bot.test_discord_bot_core import CHANNEL, USER, bot, sse

pytestmark = pytest.mark.django_db

STATUS = "{{setvar::weather::fog}}Weather {{getvar::weather}}. HP {{getvar::hp}}. Turn {{getvar::turn}}."


class Answers:
    """A model endpoint on 127.0.0.1 that streams its answers in turn and records each request."""

    def __init__(self, *texts: str) -> None:
        self.requests: list[dict] = []
        answers, recorder = iter(texts), self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                recorder.requests.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                body = sse([{"choices": [{"delta": {"content": next(answers)}}]}])
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/chat"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def prompt(self, index: int = -1) -> str:
        return "\n".join(m["content"] for m in self.requests[index]["messages"])

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Channel:
    """The Discord channel as the bot sees it: its messages by id, the bot's sends and edits."""

    def __init__(self) -> None:
        self.messages: dict[str, str] = {}
        self.ids = itertools.count(1_300_000_000_000_000_000)

    def send(self, text: str) -> str:
        message_id = str(next(self.ids))
        self.messages[message_id] = text
        return message_id

    def edit(self, message_id: str, text: str) -> None:
        self.messages[message_id] = text


@pytest.fixture
def status_preset(lantern):
    raw = make_preset(("status", STATUS, True))
    return preset_import(server=lantern, raw=raw, filename="status.json", by=Agent("test")).preset


def stored_core(http, api_token, model):
    core = bot.BotCore(
        bot.Tavernkeep("http://testserver", api_token, http),
        bot.Model("openai", model.url, "test-key", "test-model"),
        http,
        bot_name="Lantern",
    )
    return bot.StoredCore(core)


def mira(text: str) -> object:
    return bot.Incoming(guild_id="1001", channel_id=CHANNEL, author_id=USER, author_name="Mira", content=text)


def variables(stored) -> dict:
    return stored.store.conversation("1001", CHANNEL)["variables"]


def test_a_reply_with_a_write_macro_is_posted_without_it_and_the_channel_keeps_the_variable(
    http, api_token, status_preset
):
    model = Answers("You are hurt. {{setvar::hp::7}}{{incvar::turn}}", "Still here.")
    try:
        stored, channel = stored_core(http, api_token, model), Channel()
        reply = stored.answer(
            mira("I fall {{setvar::hp::999}}"), "1200000000000000001", channel.send, channel.edit
        )
        assert channel.messages[reply.ids[0]] == "You are hurt."
        assert variables(stored) == {"weather": "fog", "hp": "7", "turn": 1}
        stored.answer(mira("Am I alive?"), "1200000000000000002", channel.send, channel.edit)
    finally:
        model.close()
    second = model.prompt()
    assert "Mira: I fall {{setvar::hp::999}}" in second  # a member's write macro writes nothing
    assert "You are hurt." in second and "HP 7. Turn 1." in second


def test_a_deleted_reply_takes_its_variables_with_it_and_an_edit_extracts_nothing(
    http, api_token, status_preset
):
    model = Answers("{{setvar::hp::10}}Ready.", "Ouch. {{decvar::hp}}")
    try:
        stored, channel = stored_core(http, api_token, model), Channel()
        stored.answer(mira("Start"), "1200000000000000001", channel.send, channel.edit)
        hurt = stored.answer(mira("Hit me"), "1200000000000000002", channel.send, channel.edit)
        assert variables(stored)["hp"] == 9
        stored.edited("1001", CHANNEL, "1200000000000000002", "Hit me harder {{setvar::hp::1}}")
        assert variables(stored)["hp"] == 9
        stored.deleted("1001", CHANNEL, [hurt.ids[0], "1200000000000000099"])  # a bulk delete, one unknown
    finally:
        model.close()
    assert variables(stored) == {"weather": "fog", "hp": "10"}
    edited = ChannelMessage.objects.get(discord_id=1200000000000000002)
    assert edited.swipes[0]["content"] == "Hit me harder {{setvar::hp::1}}"


def test_the_askers_regenerate_is_a_new_swipe_edited_in_place_and_arrows_switch_back(
    http, api_token, status_preset
):
    model = Answers(
        "{{setvar::hp::10}}{{setvar::turn::1}}Ready.",
        "A troll! {{setvar::hp::3}}",
        "A pixie. {{incvar::turn}}",
    )
    try:
        stored, channel = stored_core(http, api_token, model), Channel()
        stored.answer(mira("Start"), "1200000000000000001", channel.send, channel.edit)
        troll = stored.answer(mira("What comes?"), "1200000000000000002", channel.send, channel.edit)
        assert variables(stored)["hp"] == "3"
        assert (
            stored.regenerate("1001", CHANNEL, troll.ids[0], "5", "Tom", channel.edit) is None
        )  # not the asker
        stored.regenerate("1001", CHANNEL, troll.ids[0], USER, "Mira", channel.edit)
        regenerated_prompt = model.prompt()
        assert channel.messages[troll.ids[0]] == "A pixie."
        assert variables(stored) == {"weather": "fog", "hp": "10", "turn": 2}
        stored.switch("1001", CHANNEL, troll.ids[0], -1, channel.edit)
        assert channel.messages[troll.ids[0]] == "A troll!"
        assert variables(stored) == {"weather": "fog", "hp": "3", "turn": "1"}
        assert (
            stored.switch("1001", CHANNEL, troll.ids[0], -1, channel.edit) is None
        )  # no swipe before the first
        stored.switch("1001", CHANNEL, troll.ids[0], 1, channel.edit)
    finally:
        model.close()
    assert "A troll!" not in regenerated_prompt and "HP 10. Turn 1." in regenerated_prompt
    assert channel.messages[troll.ids[0]] == "A pixie."
    assert variables(stored)["hp"] == "10"


def test_a_long_reply_is_stored_once_with_its_pieces_as_parts(http, api_token):
    long_reply = " ".join(["The lantern swings over the bar."] * 100) + "{{setvar::told::yes}}"
    model = Answers(long_reply)
    try:
        stored, channel = stored_core(http, api_token, model), Channel()
        reply = stored.answer(mira("Tell me everything."), "1200000000000000001", channel.send, channel.edit)
    finally:
        model.close()
    assert len(reply.ids) > 1 and all(len(channel.messages[i]) <= 2000 for i in reply.ids)
    assert "{{setvar" not in " ".join(channel.messages.values())
    stored.deleted("1001", CHANNEL, [reply.ids[-1]])  # deleting one piece deletes the reply
    assert variables(stored) == {}
    assert ChannelMessage.objects.filter(role="assistant").count() == 0
