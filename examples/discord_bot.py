"""A Discord bot on Tavernkeep: the whole loop of docs/bot.md, runnable.

    pip install -e '.[bot]'          # discord.py and httpx, not needed by the app
    TAVERNKEEP_URL=http://127.0.0.1:8000 TAVERNKEEP_TOKEN=… DISCORD_TOKEN=… \
    MODEL_PROVIDER=openai MODEL_URL=https://api.openai.com/v1/chat/completions MODEL_KEY=… MODEL_NAME=gpt-4o-mini \
    python examples/discord_bot.py

The loop, per message: assemble the prompt (`POST …/assemble` with the channel's history, its
per-message variables and `stm_context`) → call the model with the provider body Tavernkeep built,
streaming → clean the reply (`POST …/regex/clean`) → post it in pieces under Discord's 2 000
characters → store the turn in short-term memory (`POST …/stm/turns`) → run the memory tool call,
if the model made one (`POST …/stm/summary`) → keep the answer's variables for the next message.
When the bot joins a guild it pushes the guild's channel and member names (`POST …/directory`).

Everything above the Discord section is plain Python on httpx, importable and tested without
discord.py (tests/bot/). Ids stay strings from end to end, as discord.py and discord.js give them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

DISCORD_LIMIT = 2000
HISTORY_KEPT = 30


# -- the pieces of the loop --------------------------------------------------------------------------


@dataclass
class Incoming:
    """One Discord message the bot answers: ids as strings."""

    guild_id: str
    channel_id: str
    author_id: str
    author_name: str
    content: str
    parent_channel_id: str | None = None  # the thread's parent, for a message in a thread


@dataclass
class ModelReply:
    text: str
    summary: str | None = None  # the update_short_term_memory call's argument, when the model made one


@dataclass
class ChannelState:
    """What the bot keeps per channel between messages: the history and the per-message variables."""

    history: list[dict[str, str]] = field(default_factory=list)
    variables: dict[str, Any] = field(default_factory=dict)


def split_for_discord(text: str, limit: int = DISCORD_LIMIT) -> list[str]:
    """The reply in pieces under Discord's limit, cut at a paragraph, a line or a space when one is near."""
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind("\n\n"), window.rfind("\n"), window.rfind(" "))
        cut = cut if cut > limit // 2 else limit
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    return [*pieces, rest] if rest else pieces


class Tavernkeep:
    """The bot's side of the Tavernkeep API for one guild's token."""

    def __init__(self, base_url: str, token: str, http: httpx.Client) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = http
        self.headers = {"Authorization": f"Bearer {token}"}

    def _post(self, server_id: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}/api/v1/servers/{server_id}/{path}"
        response = self.http.post(url, json=body, headers=self.headers, timeout=30)
        if response.status_code != 200:
            raise RuntimeError(f"Tavernkeep {path}: {response.status_code} {response.json().get('error')}")
        return response.json()

    def assemble(self, server_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._post(server_id, "assemble", body)

    def clean(self, server_id: str, text: str, user: str) -> str:
        return self._post(server_id, "regex/clean", {"text": text, "names": {"user": user}})["display"]

    def store_turn(self, server_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._post(server_id, "stm/turns", body)

    def update_summary(self, server_id: str, channel: str, user: str, summary: str) -> dict[str, Any]:
        return self._post(server_id, "stm/summary", {"channel": channel, "user": user, "summary": summary})

    def push_directory(
        self, server_id: str, channels: list[dict[str, Any]], members: list[dict[str, Any]]
    ) -> dict[str, Any]:
        return self._post(server_id, "directory", {"channels": channels, "members": members})


@dataclass
class Model:
    """An OpenAI-compatible, Anthropic or Gemini endpoint, called streaming."""

    provider: str  # openai | anthropic | gemini
    url: str  # the full endpoint (Gemini: …/models/<model>:streamGenerateContent?alt=sse)
    key: str
    name: str = ""
    max_tokens: int = 1024

    def request(self, payload: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
        body = dict(payload)
        if self.provider == "openai":
            body |= {"model": self.name, "stream": True}
            return {"Authorization": f"Bearer {self.key}"}, body
        if self.provider == "anthropic":
            body |= {"model": self.name, "stream": True}
            body.setdefault("max_tokens", self.max_tokens)
            return {"x-api-key": self.key, "anthropic-version": "2023-06-01"}, body
        return {"x-goog-api-key": self.key}, body

    def complete(self, http: httpx.Client, payload: dict[str, Any]) -> ModelReply:
        """Stream the reply; gather its text and the memory tool's summary argument."""
        headers, body = self.request(payload)
        with http.stream("POST", self.url, json=body, headers=headers, timeout=120) as response:
            response.raise_for_status()
            return _gather(self.provider, _sse_events(response.iter_lines()))


def _sse_events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if line.startswith("data:"):
            data = line[5:].strip()
            if data and data != "[DONE]":
                yield json.loads(data)


def _gather(provider: str, events: Iterator[dict[str, Any]]) -> ModelReply:
    text: list[str] = []
    tool_args: list[str] = []  # OpenAI and Anthropic stream the tool's JSON arguments in pieces
    summary: str | None = None
    for event in events:
        if provider == "openai":
            delta = (event.get("choices") or [{}])[0].get("delta", {})
            text.append(delta.get("content") or "")
            for call in delta.get("tool_calls") or []:
                tool_args.append(call.get("function", {}).get("arguments") or "")
        elif provider == "anthropic":
            delta = event.get("delta", {}) if event.get("type") == "content_block_delta" else {}
            text.append(delta.get("text", "") if delta.get("type") == "text_delta" else "")
            tool_args.append(delta.get("partial_json", "") if delta.get("type") == "input_json_delta" else "")
        else:
            for part in ((event.get("candidates") or [{}])[0].get("content") or {}).get("parts", []):
                text.append(part.get("text", ""))
                if part.get("functionCall", {}).get("name") == "update_short_term_memory":
                    summary = part["functionCall"].get("args", {}).get("summary")
    if tool_args and "".join(tool_args):
        summary = json.loads("".join(tool_args)).get("summary")
    return ModelReply(text="".join(text), summary=summary)


# -- the loop ------------------------------------------------------------------------------------------


class BotCore:
    """Message in → reply pieces out, with memory kept; no Discord in here."""

    def __init__(
        self, tavernkeep: Tavernkeep, model: Model, http: httpx.Client, bot_name: str = "Bot"
    ) -> None:
        self.tavernkeep, self.model, self.http, self.bot_name = tavernkeep, model, http, bot_name
        self.channels: dict[str, ChannelState] = {}

    def handle(self, message: Incoming) -> list[str]:
        state = self.channels.setdefault(message.channel_id, ChannelState())
        said = {"role": "user", "name": message.author_name, "content": message.content}
        context = {"channel": message.channel_id, "user": message.author_id, "has_tools": True}
        if message.parent_channel_id:
            context["parent_channel"] = message.parent_channel_id
        assembled = self.tavernkeep.assemble(
            message.guild_id,
            {
                "history": [*state.history, said],
                "names": {"user": message.author_name, "char": self.bot_name},
                "variables": state.variables,
                "stm_context": {**context, "provider": self.model.provider},
                "provider": self.model.provider,
            },
        )
        reply = self.model.complete(self.http, assembled["provider_payload"])
        shown = self.tavernkeep.clean(message.guild_id, reply.text, message.author_name)
        answered = {"role": "assistant", "name": self.bot_name, "content": shown}
        self.tavernkeep.store_turn(
            message.guild_id,
            {
                "channel": message.channel_id,
                "parent_channel": message.parent_channel_id,
                "user": message.author_id,
                "user_name": message.author_name,
                "messages": [said, answered],
            },
        )
        if reply.summary:
            self.tavernkeep.update_summary(
                message.guild_id, message.channel_id, message.author_id, reply.summary[:1500]
            )
        state.history = [*state.history, said, answered][-HISTORY_KEPT:]
        state.variables = assembled.get("variables") or {}
        return split_for_discord(shown)


# -- Discord ---------------------------------------------------------------------------------------------


def run() -> None:  # pragma: no cover - needs Discord
    import asyncio

    import discord  # the [bot] extra; the core above does not need it

    intents = discord.Intents.default()
    intents.message_content = True
    intents.members = True
    client = discord.Client(intents=intents)
    http = httpx.Client()
    core = BotCore(
        Tavernkeep(os.environ["TAVERNKEEP_URL"], os.environ["TAVERNKEEP_TOKEN"], http),
        Model(
            os.environ.get("MODEL_PROVIDER", "openai"),
            os.environ["MODEL_URL"],
            os.environ["MODEL_KEY"],
            os.environ.get("MODEL_NAME", ""),
        ),
        http,
        bot_name=os.environ.get("BOT_NAME", "Bot"),
    )

    def directory_of(guild: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        everyone = guild.default_role
        channels = [
            {
                "id": str(c.id),
                "name": c.name[:100],
                "parent": str(c.category_id) if getattr(c, "category_id", None) else None,
                "private": not c.permissions_for(everyone).view_channel,
            }
            for c in guild.channels[:1000]
        ]
        members = [{"id": str(m.id), "display_name": m.display_name[:100]} for m in guild.members[:5000]]
        return channels, members

    @client.event
    async def on_guild_join(guild: Any) -> None:
        await asyncio.to_thread(core.tavernkeep.push_directory, str(guild.id), *directory_of(guild))

    @client.event
    async def on_message(message: Any) -> None:
        if message.author.bot or message.guild is None or client.user not in message.mentions:
            return
        thread_parent = getattr(message.channel, "parent_id", None)
        incoming = Incoming(
            guild_id=str(message.guild.id),
            channel_id=str(message.channel.id),
            author_id=str(message.author.id),
            author_name=message.author.display_name,
            content=message.clean_content,
            parent_channel_id=str(thread_parent) if thread_parent else None,
        )
        async with message.channel.typing():
            pieces = await asyncio.to_thread(core.handle, incoming)
        for piece in pieces:
            await message.channel.send(piece)

    client.run(os.environ["DISCORD_TOKEN"])


if __name__ == "__main__":
    run()
