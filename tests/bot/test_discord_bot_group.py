"""The example bot in a channel that uses a group (docs/bot.md, docs/groups.md): the core asks `next`,
assembles one turn per speaker, posts each reply under the member's name, carries out the group tools
and stops at its bound. Run against the real app and a recording model endpoint on 127.0.0.1."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from characters import services as card_services
from groups import services as group_services
from groups.models import MemberNote
from memory.models import StmEntry
from presets import services as preset_services
from servers.models import AuditEvent
from tests.bot.test_discord_bot_core import CHANNEL, USER, bot, sse

NUDGE = re.compile(r"Write the next reply only as ([^.\]]+)\.")


def card(server, name: str):
    raw = json.dumps(
        {
            "spec": "chara_card_v2",
            "spec_version": "2.0",
            "data": {
                "name": name,
                "description": f"{name} works at the Lantern.",
                "scenario": f"{name}'s shift.",
            },
        }
    ).encode()
    return card_services.card_import(
        server=server, raw=raw, filename=f"{name}.json", activate=False, by=None
    ).row


PRESET = {
    "prompts": [
        {"identifier": "main", "name": "Main Prompt", "role": "system", "content": "You play {{char}}."},
        *(
            {"identifier": m, "name": m, "marker": True}
            for m in ("charDescription", "scenario", "chatHistory")
        ),
    ],
    "prompt_order": [
        {
            "character_id": 100001,
            "order": [
                {"identifier": m, "enabled": True}
                for m in ("main", "charDescription", "scenario", "chatHistory")
            ],
        }
    ],
    "scenario_format": "{{scenario}}",
    "group_nudge_prompt": "[Write the next reply only as {{char}}.]",  # SillyTavern's default
}


@pytest.fixture
def party(lantern, django_capture_on_commit_callbacks):
    """Mira, Tomas and a muted Old Tom, answering in member order (`list`), used by the channel, under
    a preset that sends the scenario and SillyTavern's group nudge."""
    preset_services.preset_import(server=lantern, raw=json.dumps(PRESET).encode(), filename="group.json")
    cards = {name: card(lantern, name) for name in ("Mira", "Tomas", "Old Tom")}
    with django_capture_on_commit_callbacks(execute=True):
        row = group_services.group_save(
            server=lantern, name="Party", members=list(cards), muted=["Old Tom"], strategy="list", by=None
        )
        group_services.channel_group_set(server=lantern, channel_id=int(CHANNEL), group=row, by=None)
    return {name: c.pk for name, c in cards.items()}


def stream(provider: str, text: str, calls: list[tuple[str, dict]]) -> bytes:
    """The reply as that provider streams it: the text, then each tool call (arguments in two pieces)."""
    if provider == "openai":
        events = [{"choices": [{"delta": {"content": text}}]}]
        for index, (name, args) in enumerate(calls):
            raw = json.dumps(args)
            events.append(
                {
                    "choices": [
                        {
                            "delta": {
                                "tool_calls": [
                                    {"index": index, "function": {"name": name, "arguments": raw[:4]}}
                                ]
                            }
                        }
                    ]
                }
            )
            events.append(
                {
                    "choices": [
                        {"delta": {"tool_calls": [{"index": index, "function": {"arguments": raw[4:]}}]}}
                    ]
                }
            )
    elif provider == "anthropic":
        events = [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}]
        for index, (name, args) in enumerate(calls, start=1):
            raw = json.dumps(args)
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "name": name},
                }
            )
            for part in (raw[:4], raw[4:]):
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": part},
                    }
                )
    else:
        parts = [{"text": text}] + [{"functionCall": {"name": name, "args": args}} for name, args in calls]
        events = [{"candidates": [{"content": {"parts": parts}}]}]
    return sse(events)


class Cast:
    """A model endpoint on 127.0.0.1 that plays whichever member the request's nudge names: it records
    the request and streams that member's line (and tool calls) from `lines`."""

    def __init__(self, provider: str, lines: dict[str, tuple[str, list[tuple[str, dict]]]]) -> None:
        self.requests: list[dict] = []
        self.speakers: list[str] = []
        cast = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                named = NUDGE.findall(json.dumps(body))
                speaker = named[-1] if named else "?"
                cast.requests.append(body)
                cast.speakers.append(speaker)
                text, calls = lines.get(speaker, (f"{speaker} has nothing to say.", []))
                answer = stream(provider, text, calls)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/chat"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Cast:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def run_group(provider, http, api_token, cast, text="Who keeps the lamp tonight?"):
    core = bot.BotCore(
        bot.Tavernkeep("http://testserver", api_token, http),
        bot.Model(provider, cast.url, "k", "m"),
        http,
        "Lantern",
    )
    message = bot.Incoming(
        guild_id="1001", channel_id=CHANNEL, author_id=USER, author_name="Ann", content=text
    )
    group = core.group_of(message)
    assert group is not None and group["name"] == "Party"
    posts: list = []
    core.handle_group(message, group, posts.append)
    return core, [(p.name, " ".join(p.pieces)) for p in posts]


def test_each_speaker_gets_its_own_turn_and_its_reply_is_posted_under_its_name_in_order(
    http, api_token, party
):
    lines = {
        "Mira": ("<think>plan</think>I keep it, Ann.", []),
        "Tomas": ("Mira keeps it; I fetch the oil.", []),
    }
    with Cast("openai", lines) as cast:
        _, posts = run_group("openai", http, api_token, cast)
    assert posts == [("Mira", "I keep it, Ann."), ("Tomas", "Mira keeps it; I fetch the oil.")]
    assert cast.speakers == ["Mira", "Tomas"]  # the muted Old Tom is not asked
    mira, tomas = (json.dumps(r) for r in cast.requests)
    assert "Who keeps the lamp tonight?" in mira and "Mira's shift." in mira and "Tomas's shift." not in mira
    assert "I keep it, Ann." in tomas and "Tomas's shift." in tomas  # Tomas sees Mira's cleaned reply
    tools = [t["function"]["name"] for t in cast.requests[0]["tools"]]
    assert {"trigger_group_member", "set_member_note", "list_group_members"} <= set(tools)
    entry = StmEntry.objects.get(channel__discord_id=int(CHANNEL))
    assert [m["content"] for m in entry.messages][-3:] == [
        "Who keeps the lamp tonight?",
        "I keep it, Ann.",
        "Mira keeps it; I fetch the oil.",
    ]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_a_trigger_call_makes_the_triggered_member_answer_next(provider, http, api_token, party):
    ask = {"id": party["Old Tom"], "message": "Old Tom, is there oil in the cellar?"}
    lines = {
        "Mira": ("Let me ask Old Tom.", [("trigger_group_member", ask)]),
        "Old Tom": ("Two barrels, girl.", []),
        "Tomas": ("Then I'll carry one up.", []),
    }
    with Cast(provider, lines) as cast:
        _, posts = run_group(provider, http, api_token, cast)
    assert [name for name, _ in posts] == ["Mira", "Old Tom", "Tomas"]  # muted, yet asked by name
    assert "Old Tom, is there oil in the cellar?" in json.dumps(cast.requests[1])  # for the members only
    assert all("cellar" not in said for _, said in posts)
    assert AuditEvent.objects.filter(action="group.trigger").count() == 1


def test_members_that_trigger_each_other_stop_at_six_replies(http, api_token, party):
    lines = {
        "Mira": (
            "Your turn, Tomas.",
            [("trigger_group_member", {"id": party["Tomas"], "message": "Go on."})],
        ),
        "Tomas": ("No, yours, Mira.", [("trigger_group_member", {"id": party["Mira"], "message": "Go on."})]),
    }
    with Cast("openai", lines) as cast:
        _, posts = run_group("openai", http, api_token, cast)
    assert len(posts) == bot.GROUP_REPLIES_MAX == 6
    assert [name for name, _ in posts] == ["Mira", "Tomas"] * 3 and len(cast.requests) == 6


@pytest.mark.django_db(transaction=True)  # each API request commits, as in production: the note's cache
def test_a_note_call_is_kept_and_becomes_the_members_scenario_for_its_next_turn(http, api_token, party):
    note = {"id": party["Tomas"], "text": "Tomas promised Ann a new wick."}
    lines = {"Mira": ("Noted.", [("set_member_note", note)]), "Tomas": ("The wick, yes.", [])}
    with Cast("anthropic", lines) as cast:
        run_group("anthropic", http, api_token, cast)
    assert MemberNote.objects.get().text == "Tomas promised Ann a new wick."
    tomas = json.dumps(cast.requests[1])
    assert "Tomas promised Ann a new wick." in tomas and "Tomas's shift." not in tomas


def test_a_bad_tool_call_is_logged_and_the_loop_goes_on(http, api_token, party, caplog):
    lines = {"Mira": ("Hm.", [("trigger_group_member", {"id": 999999, "message": "Anyone?"})])}
    with Cast("openai", lines) as cast:
        _, posts = run_group("openai", http, api_token, cast)
    assert [name for name, _ in posts] == ["Mira", "Tomas"]
    assert "trigger_group_member" in caplog.text


def test_a_channel_without_a_group_is_answered_by_the_solo_loop(http, api_token, lantern):
    core = bot.BotCore(
        bot.Tavernkeep("http://testserver", api_token, http),
        bot.Model("openai", "http://127.0.0.1:9", "k"),
        http,
    )
    message = bot.Incoming(
        guild_id="1001", channel_id=CHANNEL, author_id=USER, author_name="Ann", content="Hi"
    )
    assert core.group_of(message) is None


def test_a_member_list_call_is_shown_to_the_next_speaker_not_posted(http, api_token, party):
    lines = {"Mira": ("Who is on tonight?", [("list_group_members", {})]), "Tomas": ("All of us.", [])}
    with Cast("gemini", lines) as cast:
        _, posts = run_group("gemini", http, api_token, cast)
    listed = f"Tomas (id {party['Tomas']}), Old Tom (id {party['Old Tom']}, muted)"
    assert listed in json.dumps(cast.requests[1])
    assert posts == [("Mira", "Who is on tonight?"), ("Tomas", "All of us.")]
