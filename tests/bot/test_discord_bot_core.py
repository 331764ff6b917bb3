"""The example bot's core (examples/discord_bot.py), run against the real Tavernkeep app (in process,
through httpx's WSGI transport) and a local recording model endpoint on 127.0.0.1 that streams its
answers: no Discord, no network, and discord.py is not installed."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from memory.models import StmEntry

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "discord_bot.py"
CHANNEL = "1234567890123456789"  # past 2^53, as discord.py gives it
USER = "987654321098765432"


def load_example():
    spec = importlib.util.spec_from_file_location("discord_bot_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bot = load_example()


def sse(events) -> bytes:
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"


STREAMS = {
    "openai": lambda text, summary: sse(
        [{"choices": [{"delta": {"content": piece}}]} for piece in (text[:5], text[5:])]
        + [
            {
                "choices": [
                    {
                        "delta": {
                            "tool_calls": [{"function": {"name": "update_short_term_memory", "arguments": a}}]
                        }
                    }
                ]
            }
            for a in (json.dumps({"summary": summary})[:9], json.dumps({"summary": summary})[9:])
        ]
    ),
    "anthropic": lambda text, summary: sse(
        [
            {"type": "content_block_delta", "delta": {"type": "text_delta", "text": text}},
            {
                "type": "content_block_delta",
                "delta": {"type": "input_json_delta", "partial_json": json.dumps({"summary": summary})},
            },
        ]
    ),
    "gemini": lambda text, summary: sse(
        [
            {"candidates": [{"content": {"parts": [{"text": text}]}}]},
            {
                "candidates": [
                    {
                        "content": {
                            "parts": [
                                {
                                    "functionCall": {
                                        "name": "update_short_term_memory",
                                        "args": {"summary": summary},
                                    }
                                }
                            ]
                        }
                    }
                ]
            },
        ]
    ),
}


class Recorder:
    """A model endpoint on 127.0.0.1 that records each request body and streams a set answer."""

    def __init__(self, provider: str, text: str, summary: str) -> None:
        self.requests: list[dict] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                recorder.requests.append(json.loads(self.rfile.read(length)))
                body = STREAMS[provider](text, summary)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)  # a free port: runs may overlap
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/chat"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Recorder:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def core_for(provider, http, api_token, recorder):
    model = bot.Model(provider, recorder.url, "test-key", "test-model")
    return bot.BotCore(bot.Tavernkeep("http://testserver", api_token, http), model, http, bot_name="Lantern")


def mira_says(text: str) -> object:
    return bot.Incoming(guild_id="1001", channel_id=CHANNEL, author_id=USER, author_name="Mira", content=text)


def test_the_core_imports_without_discord_py():
    with pytest.raises(ImportError):
        import discord  # noqa: F401
    assert callable(bot.BotCore)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_one_message_runs_the_whole_loop_for_each_provider(provider, http, api_token):
    with Recorder(provider, "<think>ale math</think>Plenty of ale, Mira.", "Mira asked for ale.") as model:
        core = core_for(provider, http, api_token, model)
        pieces = core.handle(mira_says("Any ale left?"))
    assert pieces == ["Plenty of ale, Mira."]
    sent = model.requests[0]
    assert "update_short_term_memory" in json.dumps(sent["tools"])
    assert "Any ale left?" in json.dumps(sent)
    entry = StmEntry.objects.get(channel__discord_id=int(CHANNEL))
    assert entry.summary == "Mira asked for ale."
    assert [m["content"] for m in entry.messages] == ["Any ale left?", "Plenty of ale, Mira."]


def test_the_second_message_carries_the_first_turn_and_its_variables(http, api_token):
    with Recorder("openai", "Plenty.", "Ale talk.") as model:
        core = core_for("openai", http, api_token, model)
        core.handle(mira_says("Any ale left?"))
        core.handle(mira_says("Then pour one."))
    second = json.dumps(model.requests[1])
    assert "Any ale left?" in second and "Plenty." in second and "Then pour one." in second


def test_a_long_reply_is_posted_in_pieces_under_discords_limit(http, api_token):
    long_reply = " ".join(["The lantern swings over the bar."] * 200)
    with Recorder("anthropic", long_reply, "Long story.") as model:
        core = core_for("anthropic", http, api_token, model)
        pieces = core.handle(mira_says("Tell me everything."))
    assert len(pieces) > 1 and all(len(p) <= 2000 for p in pieces)
    assert " ".join(pieces) == long_reply


def test_joining_a_guild_pushes_its_directory(http, api_token):
    tavernkeep = bot.Tavernkeep("http://testserver", api_token, http)
    tavernkeep.push_directory(
        "1001",
        [{"id": CHANNEL, "name": "general", "parent": None, "private": False}],
        [{"id": USER, "display_name": "Mira"}],
    )
    answer = http.get(
        "http://testserver/api/v1/servers/1001/directory", headers={"Authorization": f"Bearer {api_token}"}
    ).json()
    assert answer["members"] == [{"id": USER, "display_name": "Mira"}]


def test_a_token_for_another_guild_is_refused_in_a_sentence_and_a_guild_without_one_is_named(
    http, api_token, harbor_token
):
    tavernkeep = bot.Tavernkeep("http://testserver", {"1001": api_token, "2002": harbor_token}, http)
    assert tavernkeep.token_for("2002") == harbor_token
    with pytest.raises(bot.NoToken, match="No Tavernkeep token for guild 3003"):
        tavernkeep.clean("3003", "Hi", "Mira")
    crossed = bot.Tavernkeep("http://testserver", {"1001": harbor_token}, http)
    with pytest.raises(bot.TavernkeepError, match="404 No such server"):
        crossed.clean("1001", "Hi", "Mira")


@pytest.mark.parametrize(
    ("status", "content_type", "body", "said"),
    [
        (502, "text/html", b"<html><h1>Bad Gateway</h1></html>", "502 with text/html instead of JSON"),
        (405, "text/plain", b"", "405 with an empty body instead of JSON"),
        (200, "application/json", b"[1, 2]", "200 with application/json instead of JSON"),
        (400, "application/json", b'{"error": "`text` must be a string."}', "400 `text` must be a string."),
    ],
)
def test_a_bad_answer_from_tavernkeep_is_a_sentence_not_a_json_decode_error(status, content_type, body, said):
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers={"Content-Type": content_type})

    with httpx.Client(transport=httpx.MockTransport(answer)) as wrong:
        tavernkeep = bot.Tavernkeep("http://proxy.invalid", "token", wrong)
        with pytest.raises(bot.TavernkeepError) as caught:
            tavernkeep.clean("1001", "Hi", "Mira")
    assert said in str(caught.value)


def test_the_core_stops_on_a_refused_assemble_and_stores_nothing(http, api_token):
    with Recorder("openai", "Plenty.", "Ale talk.") as model:
        core = bot.BotCore(
            bot.Tavernkeep("http://testserver", "not-a-token", http),
            bot.Model("openai", model.url, "k"),
            http,
        )
        with pytest.raises(bot.TavernkeepError, match="401"):
            core.handle(mira_says("Any ale left?"))
    assert model.requests == [] and not StmEntry.objects.exists()


ENVIRONMENT = {
    "TAVERNKEEP_URL": "http://127.0.0.1:8000",
    "TAVERNKEEP_TOKENS": "1001=tk-one, 2002=tk-two",
    "DISCORD_TOKEN": "MTAwMTAwMTAwMQ.Gx7aQz.not-a-real-signature-at-all",
    "MODEL_URL": "http://127.0.0.1:9/v1/chat",
    "MODEL_KEY": "key",
}


def test_the_bot_reads_one_token_per_guild_from_its_environment():
    config = bot.config_from(ENVIRONMENT)
    assert config.tokens == {"1001": "tk-one", "2002": "tk-two"} and config.model.provider == "openai"
    single = bot.config_from({**ENVIRONMENT, "TAVERNKEEP_TOKENS": "", "TAVERNKEEP_TOKEN": "tk"})
    assert single.tokens == "tk"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"TAVERNKEEP_URL": ""}, "Set TAVERNKEEP_URL"),
        ({"TAVERNKEEP_URL": "127.0.0.1:8000"}, "must start with http://"),
        ({"TAVERNKEEP_TOKENS": ""}, "one token per guild"),
        ({"TAVERNKEEP_TOKENS": "general=tk"}, "<guild id>=<token> pairs"),
        ({"MODEL_PROVIDER": "ollama"}, "MODEL_PROVIDER must be one of"),
        ({"MODEL_KEY": ""}, "Set MODEL_KEY"),
        ({"DISCORD_TOKEN": ""}, "Set DISCORD_TOKEN"),
        ({"DISCORD_TOKEN": "fake"}, "DISCORD_TOKEN does not look like a bot token"),
        ({"DISCORD_TOKEN": "Bot abc.def.ghi"}, "DISCORD_TOKEN does not look like a bot token"),
    ],
)
def test_a_missing_or_malformed_setting_is_a_sentence_not_a_key_error(change, said):
    with pytest.raises(bot.ConfigError, match=said.replace("+", r"\+")):
        bot.config_from({**ENVIRONMENT, **change})


def test_a_fake_discord_token_stops_the_bot_with_one_sentence_and_no_traceback():
    """Run as its operator would, with every setting but a made-up Discord token."""
    script = Path(bot.__file__)
    environment = {**ENVIRONMENT, "DISCORD_TOKEN": "fake", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, str(script)], env=environment, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "DISCORD_TOKEN" in done.stderr, done.stderr
