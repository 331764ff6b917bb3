"""The example bot in a channel that uses a group (docs/bot.md, docs/groups.md): the core asks `next`,
assembles one turn per speaker, posts each reply under the member's name, carries out the group tools
and stops at its bound. Run against the real app and a recording model endpoint on 127.0.0.1."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from characters import services as card_services
from conversations.channels import services as channel_services
from core.actors import SYSTEM
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
        server=server, raw=raw, filename=f"{name}.json", activate=False, by=SYSTEM
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
    preset_services.preset_import(
        server=lantern, raw=json.dumps(PRESET).encode(), filename="group.json", by=SYSTEM
    )
    cards = {name: card(lantern, name) for name in ("Mira", "Tomas", "Old Tom")}
    with django_capture_on_commit_callbacks(execute=True):
        row = group_services.group_save(
            server=lantern, name="Party", members=list(cards), muted=["Old Tom"], strategy="list", by=SYSTEM
        )
        group_services.channel_group_set(server=lantern, channel_id=int(CHANNEL), group=row, by=SYSTEM)
    return {name: c.pk for name, c in cards.items()}


def stream(provider: str, text: str, calls: list[tuple[str, dict]]) -> bytes:
    """The reply as that provider streams it: the text, then each tool call (arguments in two pieces)."""
    events: list[dict[str, Any]]
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
                                    {
                                        "index": index,
                                        "id": f"call_{name}_{index}",
                                        "function": {"name": name, "arguments": raw[:4]},
                                    }
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
                    "content_block": {"type": "tool_use", "id": f"toolu_{name}_{index}", "name": name},
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
        parts: list[dict[str, Any]] = [{"text": text}] + [
            {"functionCall": {"name": name, "args": args}} for name, args in calls
        ]
        events = [{"candidates": [{"content": {"parts": parts}}]}]
    return sse(events)


def tool_results(provider: str, body: dict) -> list:
    """The tool results a request hands back to the model (its last turn), in that provider's shape."""
    if provider == "openai":
        messages = body.get("messages", [])
        tail: list[dict[str, Any]] = []
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            tail.insert(0, json.loads(message["content"]))
        return tail
    if provider == "anthropic":
        last = (body.get("messages") or [{}])[-1]
        content = last.get("content") if isinstance(last.get("content"), list) else []
        return [json.loads(b["content"]) for b in content if b.get("type") == "tool_result"]
    last = (body.get("contents") or [{}])[-1]
    return [
        p["functionResponse"]["response"]["result"] for p in last.get("parts", []) if "functionResponse" in p
    ]


class Cast:
    """A model endpoint on 127.0.0.1 that plays whichever member the request's nudge names: it records
    the request and streams that member's line (and tool calls) from `lines`. A request that hands tool
    results back gets the line's third part (the text after the results; none: an empty reply), so
    `turns` holds each speaker's first request and `rounds` the ones with results."""

    def __init__(self, provider: str, lines: dict[str, tuple]) -> None:
        self.requests: list[dict] = []
        self.turns: list[dict] = []
        self.rounds: list[tuple[str, list]] = []  # (speaker, the results handed back)
        self.speakers: list[str] = []
        cast = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                named = NUDGE.findall(json.dumps(body))
                speaker = named[-1] if named else "?"
                cast.requests.append(body)
                line = lines.get(speaker, (f"{speaker} has nothing to say.", []))
                results = tool_results(provider, body)
                if results:
                    cast.rounds.append((speaker, results))
                    after = line[2] if len(line) > 2 else ""
                    text, calls = after if isinstance(after, tuple) else (after, [])
                else:
                    cast.turns.append(body)
                    cast.speakers.append(speaker)
                    text, calls = line[0], line[1]
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


class Webhook:
    """The channel's webhook as the bot sees it: each piece it posts gets the id Discord would give it
    now (a snowflake is a time), under the member's name; the bot edits its placeholder through it."""

    def __init__(self) -> None:
        self.messages: dict[str, str] = {}
        self.posted: list[tuple[str | None, str]] = []  # (name, id) in the order posted

    def post(self, post: bot.Post) -> list[str]:
        ids = []
        for piece in post.pieces:
            message_id = str(((int(time.time() * 1000) - 1_420_070_400_000) << 22) + len(self.posted))
            self.messages[message_id] = piece
            self.posted.append((post.name, message_id))
            ids.append(message_id)
        return ids

    def edit(self, message_id: str, text: str) -> None:
        self.messages[message_id] = text


def run_group(provider, http, api_token, cast, text="Who keeps the lamp tonight?", raw=False):
    """One user message in the group channel, through the example's stored-conversation group loop:
    the posts as the channel shows them, (member, text) in order (raw: the bot's Posts, with their
    avatars)."""
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
    stored, webhook = bot.StoredCore(core), Webhook()
    said_id = str(((int(time.time() * 1000) - 1_420_070_400_000) << 22) - 1)
    avatars: list = []

    def post(p: bot.Post) -> list[str]:
        avatars.append(p.avatar_url)
        return webhook.post(p)

    replies = stored.answer_group(message, said_id, group, post, webhook.edit)
    posts = [(r.speaker, " ".join(webhook.messages[i] for i in r.ids)) for r in replies]
    if raw:
        by_id = dict(zip((i for _, i in webhook.posted), avatars, strict=True))
        return stored, [bot.Post([t], n, by_id[r.ids[0]]) for r, (n, t) in zip(replies, posts, strict=True)]
    return stored, posts


def test_each_speaker_gets_its_own_turn_and_its_reply_is_posted_under_its_name_in_order(
    http, api_token, party
):
    lines: dict[str, tuple] = {
        "Mira": ("<think>plan</think>I keep it, Ann.", []),
        "Tomas": ("Mira keeps it; I fetch the oil.", []),
    }
    with Cast("openai", lines) as cast:
        _, posts = run_group("openai", http, api_token, cast)
    assert posts == [("Mira", "I keep it, Ann."), ("Tomas", "Mira keeps it; I fetch the oil.")]
    assert cast.speakers == ["Mira", "Tomas"]  # the muted Old Tom is not asked
    mira, tomas = (json.dumps(r) for r in cast.turns)
    assert "Who keeps the lamp tonight?" in mira and "Mira's shift." in mira and "Tomas's shift." not in mira
    assert "I keep it, Ann." in tomas and "Tomas's shift." in tomas  # Tomas sees Mira's cleaned reply
    tools = [t["function"]["name"] for t in cast.turns[0]["tools"]]
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
    assert "Old Tom, is there oil in the cellar?" in json.dumps(cast.turns[1])  # for the members only
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
    assert [name for name, _ in posts] == ["Mira", "Tomas"] * 3 and len(cast.turns) == 6


@pytest.mark.django_db(transaction=True)  # each API request commits, as in production: the note's cache
def test_a_note_call_is_kept_and_becomes_the_members_scenario_for_its_next_turn(http, api_token, party):
    note = {"id": party["Tomas"], "text": "Tomas promised Ann a new wick."}
    lines = {"Mira": ("Noted.", [("set_member_note", note)]), "Tomas": ("The wick, yes.", [])}
    with Cast("anthropic", lines) as cast:
        run_group("anthropic", http, api_token, cast)
    assert MemberNote.objects.get().text == "Tomas promised Ann a new wick."
    tomas = json.dumps(cast.turns[1])
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
    lines: dict[str, tuple] = {
        "Mira": ("Who is on tonight?", [("list_group_members", {})]),
        "Tomas": ("All of us.", []),
    }
    with Cast("gemini", lines) as cast:
        _, posts = run_group("gemini", http, api_token, cast)
    listed = f"Tomas (id {party['Tomas']}), Old Tom (id {party['Old Tom']}, muted)"
    assert listed in json.dumps(cast.turns[1])
    assert posts == [("Mira", "Who is on tonight?"), ("Tomas", "All of us.")]


def last_turn(provider: str, body: dict) -> tuple[dict, dict]:
    """The model's turn with its calls and the turn with their results, as the request carries them."""
    key = "contents" if provider == "gemini" else "messages"
    return body[key][-2], body[key][-1]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_a_dice_result_goes_back_to_the_model_in_its_providers_shape_before_the_reply_is_posted(
    provider, http, api_token, party
):
    lines = {
        "Mira": ("Let me roll for the lamp.", [("roll_dice", {"formula": "2d6+1"})], "Snake eyes? No: fine.")
    }
    with Cast(provider, lines) as cast:
        _, posts = run_group(provider, http, api_token, cast)
    assert posts[0] == ("Mira", "Let me roll for the lamp.\n\nSnake eyes? No: fine.")
    [(speaker, [result])] = cast.rounds
    assert speaker == "Mira" and result["formula"] == "2d6+1" and len(result["rolls"]) == 2
    assert result["total"] == sum(result["rolls"]) + 1 and all(1 <= die <= 6 for die in result["rolls"])
    asked, answered = last_turn(provider, cast.requests[1])
    if provider == "openai":
        call = asked["tool_calls"][0]
        assert asked["role"] == "assistant" and call["function"]["name"] == "roll_dice"
        assert answered == {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}
    elif provider == "anthropic":
        use = next(block for block in asked["content"] if block["type"] == "tool_use")
        assert asked["role"] == "assistant" and use["input"] == {"formula": "2d6+1"}
        assert answered["role"] == "user" and answered["content"][0]["tool_use_id"] == use["id"]
    else:
        assert asked["role"] == "model" and asked["parts"][-1]["functionCall"]["name"] == "roll_dice"
        assert answered["parts"][0]["functionResponse"]["name"] == "roll_dice"
    assert AuditEvent.objects.filter(action="group.dice").count() == 1
    assert cast.speakers == ["Mira", "Tomas"]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_a_model_that_keeps_calling_tools_is_answered_four_times_then_posted(
    provider, http, api_token, party
):
    again = ("Once more.", [("roll_dice", {"formula": "d20"})])
    lines = {"Mira": ("Rolling.", [("roll_dice", {"formula": "d20"})], again)}
    with Cast(provider, lines) as cast:
        _, posts = run_group(provider, http, api_token, cast)
    assert [speaker for speaker, _ in cast.rounds] == ["Mira"] * bot.TOOL_ROUNDS_MAX == ["Mira"] * 4
    assert (
        posts[0][0] == "Mira"
        and posts[0][1].startswith("Rolling.")
        and [n for n, _ in posts] == ["Mira", "Tomas"]
    )
    assert AuditEvent.objects.filter(action="group.dice").count() == 5  # every call made is carried out


def test_a_refused_tool_call_is_answered_with_the_sentence_and_the_model_goes_on(http, api_token, party):
    lines = {"Mira": ("Hm.", [("roll_dice", {"formula": "all the dice"})], "I cannot roll that.")}
    with Cast("openai", lines) as cast:
        _, posts = run_group("openai", http, api_token, cast)
    [(_, [result])] = cast.rounds
    assert "is not dice notation" in result["error"]
    assert posts[0] == ("Mira", "Hm.\n\nI cannot roll that.")


@pytest.mark.django_db(transaction=True)  # each API request commits, as in production: the note's cache
def test_one_member_sets_the_authors_note_another_rolls_and_the_next_prompts_carry_both(
    http, api_token, party
):
    """The shared workspace in one loop: Mira writes the channel's Author's Note, Tomas rolls, and
    every prompt after Mira's carries the note; Tomas's roll reaches only his own next round."""
    lines = {
        "Mira": (
            "Setting the scene.",
            [("set_author_note", {"text": "A storm is rising over the harbour."})],
            "",
        ),
        "Tomas": ("I try the rusty lock.", [("roll_dice", {"formula": "1d20+2"})], "It gives."),
    }
    with Cast("anthropic", lines) as cast:
        _, posts = run_group("anthropic", http, api_token, cast)
    assert [name for name, _ in posts] == ["Mira", "Tomas"]
    assert "A storm is rising" not in json.dumps(cast.turns[0])  # Mira's own first prompt came before it
    assert "A storm is rising over the harbour." in json.dumps(cast.turns[1])  # Tomas's prompt has it
    assert AuditEvent.objects.filter(action="group.authors_note").count() == 1
    [(mira, [note]), (tomas, [roll])] = cast.rounds
    assert (mira, tomas) == ("Mira", "Tomas") and note["authors_note"].startswith("A storm")
    assert roll["formula"] == "1d20+2" and 3 <= roll["total"] <= 22


def test_each_member_is_posted_with_its_public_avatar_url(http, api_token, party):
    lines: dict[str, tuple] = {"Mira": ("Here.", []), "Tomas": ("Here too.", [])}
    with Cast("openai", lines) as cast:
        _, posts = run_group("openai", http, api_token, cast, raw=True)
    assert [p.avatar_url.split("/avatars/1001/")[1].split("/")[0] for p in posts] == [
        str(party["Mira"]),
        str(party["Tomas"]),
    ]
    assert http.get(posts[0].avatar_url).headers["Content-Type"] == "image/png"


@pytest.mark.django_db(transaction=True)  # each tool call commits, as it does for a real bot
def test_three_members_share_the_workspace_one_writes_the_note_one_recalls_one_rolls(
    http, api_token, party, lantern, django_capture_on_commit_callbacks
):
    """The shared workspace in one loop (docs/groups.md#a-shared-workspace): Mira writes the channel's
    Author's Note, Tomas recalls what Ann said earlier in the stored conversation, Old Tom rolls; each
    result goes back to its model before the reply is posted, and the prompts after Mira's carry the note."""
    with django_capture_on_commit_callbacks(execute=True):
        group_services.group_save(
            server=lantern,
            name="Party",
            members=["Mira", "Tomas", "Old Tom"],
            strategy="list",
            replace=True,
            by=SYSTEM,
        )
    channel_services.message_post(
        server_id=lantern.pk,
        channel_id=int(CHANNEL),
        message_id=9001,
        role="user",
        content="I hid the cellar key under the blue lantern.",
        author_id=int(USER),
        author_name="Ann",
    )
    lines = {
        "Mira": ("Setting the scene.", [("set_author_note", {"text": "Night falls on the harbour."})], ""),
        "Tomas": (
            "Let me think.",
            [("recall", {"query": "cellar key"})],
            "The key is under the blue lantern.",
        ),
        "Old Tom": ("Old bones, old luck.", [("roll_dice", {"formula": "2d6"})], "Seven, as ever."),
    }
    with Cast("anthropic", lines) as cast:
        _, posts = run_group("anthropic", http, api_token, cast)
    assert [name for name, _ in posts] == ["Mira", "Tomas", "Old Tom"]
    assert "Night falls" not in json.dumps(cast.turns[0])
    assert all("Night falls on the harbour." in json.dumps(turn) for turn in cast.turns[1:])
    [(_, [note]), (_, [recalled]), (_, [roll])] = cast.rounds
    assert note["authors_note"] == "Night falls on the harbour."
    assert [m["content"] for m in recalled["messages"]] == ["I hid the cellar key under the blue lantern."]
    assert roll["formula"] == "2d6" and 2 <= roll["total"] <= 12
    assert posts[1][0] == "Tomas" and "The key is under the blue lantern." in posts[1][1]


def test_the_group_loop_stores_each_reply_under_its_member_and_the_next_message_assembles_from_the_store(
    http, api_token, party
):
    ask = {"id": party["Old Tom"], "message": "Old Tom, is there oil in the cellar?"}
    lines = {
        "Mira": ("I keep it. {{setvar::lamp::Mira}}", [("trigger_group_member", ask)]),
        "Old Tom": ("Two barrels, girl.", []),
        "Tomas": ("Then I'll carry one up.", []),
    }
    with Cast("openai", lines) as cast:
        stored, posts = run_group("openai", http, api_token, cast)
    assert posts == [
        ("Mira", "I keep it."),  # the write macro is extracted, never posted
        ("Old Tom", "Two barrels, girl."),
        ("Tomas", "Then I'll carry one up."),
    ]
    conversation = stored.store.conversation("1001", CHANNEL)
    talk = [(m["role"], m["name"], m["content"]) for m in conversation["messages"] if m["role"] != "system"]
    assert talk == [
        ("user", "Ann", "Who keeps the lamp tonight?"),
        ("assistant", "Mira", "I keep it."),
        ("assistant", "Old Tom", "Two barrels, girl."),
        ("assistant", "Tomas", "Then I'll carry one up."),
    ]
    assert conversation["variables"] == {"lamp": "Mira"}
    # The question to Old Tom is kept for the members who answered after it, in their prompts only.
    private = {m["private_to"] for m in conversation["messages"] if m["role"] == "system"}
    assert private == {"Old Tom", "Tomas"}
    assert "cellar" in json.dumps(cast.turns[1]) and "cellar" not in json.dumps(cast.turns[0])

    again: dict[str, tuple[str, list[Any]]] = {
        "Mira": ("Still me.", []),
        "Tomas": ("And I have the oil.", []),
    }
    with Cast("openai", again) as cast:  # a new bot process: it keeps no history of its own
        _, posts = run_group("openai", http, api_token, cast, text="And the oil?")
    assert posts == [("Mira", "Still me."), ("Tomas", "And I have the oil.")]
    mira = json.dumps(cast.turns[0])
    assert "I keep it." in mira and "Two barrels, girl." in mira and "And the oil?" in mira
    assert "cellar" not in mira  # Old Tom's and Tomas's private contexts, not Mira's


def test_the_askers_regenerate_of_a_members_reply_is_a_new_swipe_written_as_that_member(
    http, api_token, party
):
    with Cast("openai", {"Mira": ("I keep it.", []), "Tomas": ("Fine.", [])}) as cast:
        stored, _ = run_group("openai", http, api_token, cast)
    mira_id = next(i for i, r in stored.replies.items() if r.speaker == "Mira")
    edits: dict[str, str] = {}
    with Cast("openai", {"Mira": ("No, Tomas keeps it tonight.", [])}) as cast:
        stored.core.model = bot.Model("openai", cast.url, "k", "m")
        answer = stored.regenerate("1001", CHANNEL, mira_id, USER, "Ann", edits.__setitem__)
    assert cast.speakers == ["Mira"]  # assembled as Mira, the history ending before her reply
    assert "I keep it." not in json.dumps(cast.turns[0])
    assert answer["message"]["name"] == "Mira" and answer["message"]["swipes"] == 2
    assert edits == {mira_id: "No, Tomas keeps it tonight."}
