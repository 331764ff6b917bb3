"""A Discord bot on Tavernkeep: the whole loop of docs/bot.md, runnable.

    pip install -r examples/requirements.txt      # discord.py and httpx: the bot needs nothing else
    TAVERNKEEP_URL=http://127.0.0.1:8000 TAVERNKEEP_TOKENS=<guild id>=<token>,<guild id>=<token> \
    DISCORD_TOKEN=… MODEL_PROVIDER=openai MODEL_URL=https://api.openai.com/v1/chat/completions \
    MODEL_KEY=… MODEL_NAME=gpt-4o-mini python examples/discord_bot.py

Each Discord guild is its own server in Tavernkeep with its own API token (made on that server's
Tokens page), so the bot holds one token per guild: `TAVERNKEEP_TOKENS` maps guild ids to tokens
(`TAVERNKEEP_TOKEN` alone serves a bot that is in one guild). A guild without a token is skipped
with a line in the log.

The loop, per message: assemble the prompt (`POST …/assemble` with the channel's history, its
per-message variables and `stm_context`) → call the model with the provider body Tavernkeep built,
streaming → clean the reply (`POST …/regex/clean`) → post it in pieces under Discord's 2 000
characters → store the turn in short-term memory (`POST …/stm/turns`) → run the memory tool call,
if the model made one (`POST …/stm/summary`) → keep the answer's variables for the next message.
When the bot joins a guild it pushes the guild's channel and member names (`POST …/directory`).

In a channel that uses a group (docs/groups.md) the bot answers every user message from the
channel's stored conversation: it stores the message, asks `…/groups/<name>/next` who speaks (reading
the stored conversation), then runs one turn per speaker (assembled from the stored conversation for
that member, with the group tools), posts each reply under the member's name and avatar through a
channel webhook and stores it with `speaker`,
carrying out the tool calls and handing each result back to the model in its provider's shape until it
answers without one (at most TOOL_ROUNDS_MAX rounds); at most GROUP_REPLIES_MAX replies per user message. docs/bot.md, "What the example bot does in a group channel".

Everything above the Discord section is plain Python on httpx, importable and tested without
discord.py (tests/bot/). Ids stay strings from end to end, as discord.py and discord.js give them.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

DISCORD_LIMIT = 2000
HISTORY_KEPT = 30
GROUP_REPLIES_MAX = (
    6  # replies per user message in a group channel: members that trigger each other stop here
)
GROUP_CACHE_SECONDS = 60  # how long the bot trusts a channel's group before asking again
GROUP_MESSAGES_SENT = 200  # the most messages `next` reads
MEMORY_TOOL = "update_short_term_memory"
LIST_MEMBERS, TRIGGER_MEMBER, SET_NOTE = "list_group_members", "trigger_group_member", "set_member_note"
# Carried out by POST …/channels/<C>/tools/<name>.
CHANNEL_TOOLS = ("set_author_note", "add_agent_context", "recall", "roll_dice")
PRIVATE_CONTEXT_MAX_CHARS = 1500  # the most text add_agent_context keeps
TOOL_ROUNDS_MAX = 4  # times a turn's tool results go back to the model before the reply is posted
log = logging.getLogger("tavernkeep-bot")


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
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # every tool call: name, arguments
    call_ids: list[str] = field(default_factory=list)  # each call's id, to answer it (Gemini: none, "")


@dataclass
class ChannelState:
    """What the bot keeps per channel between messages: the history and the per-message variables."""

    history: list[dict[str, str]] = field(default_factory=list)
    variables: dict[str, Any] = field(default_factory=dict)


@dataclass
class Post:
    """One reply to post: as the bot itself (`name` None), or under a group member's name and picture
    (the group API's public `avatar_url`) through a channel webhook."""

    pieces: list[str]
    name: str | None = None
    avatar_url: str | None = None


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


class TavernkeepError(Exception):
    """Tavernkeep refused a request or could not be reached; the message is one sentence."""


class NoToken(TavernkeepError):
    """The bot has no Tavernkeep token for this guild."""


class Tavernkeep:
    """The bot's side of the Tavernkeep API: one token per guild (each guild is its own server there)."""

    def __init__(self, base_url: str, tokens: Mapping[str, str] | str, http: httpx.Client) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = http
        # A plain string is the token of a bot that is in one guild: it is sent for every guild.
        self.tokens: dict[str, str] = {} if isinstance(tokens, str) else dict(tokens)
        self.only_token: str | None = tokens if isinstance(tokens, str) else None

    def token_for(self, server_id: str) -> str:
        token = self.tokens.get(server_id) or self.only_token
        if not token:
            raise NoToken(
                f"No Tavernkeep token for guild {server_id}: make one on that server's Tokens page and add "
                f"{server_id}=<token> to TAVERNKEEP_TOKENS."
            )
        return token

    def _post(self, server_id: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}/api/v1/servers/{server_id}/{path}"
        headers = {"Authorization": f"Bearer {self.token_for(server_id)}"}
        try:
            response = self.http.post(url, json=body, headers=headers, timeout=30)
        except httpx.HTTPError as exc:
            raise TavernkeepError(f"Tavernkeep {path}: could not reach {self.base_url} ({exc}).") from None
        return answer_of(path, response)

    def assemble(self, server_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._post(server_id, "assemble", body)

    def clean(self, server_id: str, text: str, user: str) -> str:
        return self._post(server_id, "regex/clean", {"text": text, "names": {"user": user}})["display"]

    def store_turn(self, server_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._post(server_id, "stm/turns", body)

    def update_summary(self, server_id: str, channel: str, user: str, summary: str) -> dict[str, Any]:
        return self._post(server_id, "stm/summary", {"channel": channel, "user": user, "summary": summary})

    def _get(self, server_id: str, path: str, params: dict[str, str] | None = None) -> dict[str, Any]:
        url = f"{self.base_url}/api/v1/servers/{server_id}/{path}"
        headers = {"Authorization": f"Bearer {self.token_for(server_id)}"}
        try:
            response = self.http.get(url, params=params, headers=headers, timeout=30)
        except httpx.HTTPError as exc:
            raise TavernkeepError(f"Tavernkeep {path}: could not reach {self.base_url} ({exc}).") from None
        return answer_of(path, response)

    def channel_group(self, server_id: str, channel: str, parent: str | None = None) -> dict[str, Any] | None:
        """The group the channel (a thread: or its parent) uses, or None when the server's character answers."""
        params = {"parent": parent} if parent else None
        return self._get(server_id, f"channels/{channel}/group", params)["group"]

    def group(self, server_id: str, name: str) -> dict[str, Any]:
        return self._get(server_id, f"groups/{quote(name, safe='')}")

    def next_speakers(
        self,
        server_id: str,
        name: str,
        messages: list[dict[str, str]] | None = None,
        seed: int | None = None,
        *,
        conversation: str | None = None,
    ) -> list[str]:
        """Who answers next: from the channel's stored conversation (`conversation`, its id), or from
        the `messages` the bot sends."""
        body: dict[str, Any] = (
            {"conversation": conversation}
            if conversation is not None
            else {"messages": (messages or [])[-GROUP_MESSAGES_SENT:]}
        )
        if seed is not None:
            body["seed"] = seed
        return self._post(server_id, f"groups/{quote(name, safe='')}/next", body)["speakers"]

    def trigger(self, server_id: str, name: str, channel: str, member: Any, message: str) -> str:
        """The trigger_group_member tool: the member who answers next (by name)."""
        body = {"trigger": {"member": member, "message": message, "channel": channel}}
        return self._post(server_id, f"groups/{quote(name, safe='')}/next", body)["speakers"][0]

    def set_note(self, server_id: str, name: str, channel: str, member: Any, text: str) -> dict[str, Any]:
        body = {"channel": channel, "member": member, "text": text}
        return self._post(server_id, f"groups/{quote(name, safe='')}/notes", body)

    def channel_tool(self, server_id: str, channel: str, name: str, arguments: dict[str, Any]) -> Any:
        """A shared-workspace tool (set_author_note, add_agent_context, recall, roll_dice) carried out
        by Tavernkeep: its result."""
        return self._post(server_id, f"channels/{channel}/tools/{quote(name, safe='')}", arguments)["result"]

    def push_directory(
        self, server_id: str, channels: list[dict[str, Any]], members: list[dict[str, Any]]
    ) -> dict[str, Any]:
        return self._post(server_id, "directory", {"channels": channels, "members": members})


def answer_of(path: str, response: httpx.Response) -> dict[str, Any]:
    """The JSON object Tavernkeep answered, or TavernkeepError with its `error` sentence; an answer
    that is not JSON (a proxy's error page, an empty body) is said as such, never a JSONDecodeError."""
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if response.status_code == 200 and isinstance(answer, dict):
        return answer
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        raise TavernkeepError(f"Tavernkeep {path}: {response.status_code} {answer['error']}")
    kind = response.headers.get("Content-Type", "no content type") if response.content else "an empty body"
    raise TavernkeepError(
        f"Tavernkeep {path}: {response.status_code} with {kind} instead of JSON; is TAVERNKEEP_URL the "
        "Tavernkeep address?"
    )


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
    """The reply's text and its tool calls, each call's JSON arguments put back together (OpenAI and
    Anthropic stream them in pieces, keyed by the call's index)."""
    text: list[str] = []
    names: dict[int, str] = {}
    ids: dict[int, str] = {}
    pieces: dict[int, list[str]] = {}
    whole: list[tuple[str, dict[str, Any]]] = []  # Gemini sends each call whole
    for event in events:
        if provider == "openai":
            delta = (event.get("choices") or [{}])[0].get("delta", {})
            text.append(delta.get("content") or "")
            for call in delta.get("tool_calls") or []:
                index = call.get("index", 0)
                function = call.get("function") or {}
                if function.get("name"):
                    names[index] = function["name"]
                if call.get("id"):
                    ids[index] = call["id"]
                pieces.setdefault(index, []).append(function.get("arguments") or "")
        elif provider == "anthropic":
            index = event.get("index", 0)
            block = event.get("content_block") or {}
            if event.get("type") == "content_block_start" and block.get("type") == "tool_use":
                names[index] = block.get("name", "")
                ids[index] = block.get("id", "")
            delta = event.get("delta", {}) if event.get("type") == "content_block_delta" else {}
            text.append(delta.get("text", "") if delta.get("type") == "text_delta" else "")
            if delta.get("type") == "input_json_delta":
                pieces.setdefault(index, []).append(delta.get("partial_json", ""))
        else:
            for part in ((event.get("candidates") or [{}])[0].get("content") or {}).get("parts", []):
                text.append(part.get("text", ""))
                call = part.get("functionCall")
                if call and call.get("name"):
                    whole.append((call["name"], call.get("args") or {}))
    whole_ids = [""] * len(whole)
    for index, parts in sorted(pieces.items()):
        arguments = "".join(parts)
        # A call the stream never named is the memory tool, the one tool a solo turn declares.
        whole.append((names.get(index, MEMORY_TOOL), _arguments(arguments)))
        whole_ids.append(ids.get(index) or f"call_{index}")
    usable = [
        (call, call_id) for call, call_id in zip(whole, whole_ids, strict=True) if isinstance(call[1], dict)
    ]
    calls = [call for call, _ in usable]
    summary = next((args.get("summary") for name, args in calls if name == MEMORY_TOOL), None)
    return ModelReply(text="".join(text), summary=summary, calls=calls, call_ids=[i for _, i in usable])


def _arguments(text: str) -> Any:
    """A call's JSON arguments; a model that streamed broken JSON made no usable call (None)."""
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return None


def with_tool_results(
    provider: str, payload: dict[str, Any], reply: ModelReply, results: list[Any]
) -> dict[str, Any]:
    """The provider body for the next round: the model's turn with its tool calls, then each call's
    result, in that provider's own shape (OpenAI `tool` messages, Anthropic `tool_result` blocks,
    Gemini `functionResponse` parts)."""
    calls = list(zip(reply.calls, reply.call_ids, results, strict=True))
    asked: dict[str, Any]
    if provider == "openai":
        asked = {
            "role": "assistant",
            "content": reply.text or None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for (name, args), call_id, _ in calls
            ],
        }
        answers = [
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result, ensure_ascii=False)}
            for _, call_id, result in calls
        ]
        return {**payload, "messages": [*payload.get("messages", []), asked, *answers]}
    if provider == "anthropic":
        text = [{"type": "text", "text": reply.text}] if reply.text.strip() else []
        uses = [
            {"type": "tool_use", "id": call_id, "name": name, "input": args}
            for (name, args), call_id, _ in calls
        ]
        answers = [
            {"type": "tool_result", "tool_use_id": call_id, "content": json.dumps(result, ensure_ascii=False)}
            for _, call_id, result in calls
        ]
        turns = [{"role": "assistant", "content": [*text, *uses]}, {"role": "user", "content": answers}]
        return {**payload, "messages": [*payload.get("messages", []), *turns]}
    text_parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text.strip() else []
    asked = {
        "role": "model",
        "parts": [*text_parts, *({"functionCall": {"name": n, "args": a}} for (n, a), _, _ in calls)],
    }
    replies: dict[str, Any] = {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": name, "response": {"result": result}}}
            for (name, _), _, result in calls
        ],
    }
    return {**payload, "contents": [*payload.get("contents", []), asked, replies]}


# -- the loop ------------------------------------------------------------------------------------------


class BotCore:
    """Message in → reply pieces out, with memory kept; no Discord in here."""

    def __init__(
        self, tavernkeep: Tavernkeep, model: Model, http: httpx.Client, bot_name: str = "Bot"
    ) -> None:
        self.tavernkeep, self.model, self.http, self.bot_name = tavernkeep, model, http, bot_name
        self.channels: dict[str, ChannelState] = {}
        self.groups: dict[str, tuple[float, dict[str, Any] | None]] = {}  # channel → (when asked, group)
        self.seed: int | None = None  # a fixed seed makes `next` reproducible (tests); None: drawn each time

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

    def group_of(self, message: Incoming) -> dict[str, Any] | None:
        """The group the message's channel uses (None: the server's character), asked again after a minute."""
        asked = self.groups.get(message.channel_id)
        if asked is not None and time.monotonic() - asked[0] < GROUP_CACHE_SECONDS:
            return asked[1]
        group = self.tavernkeep.channel_group(message.guild_id, message.channel_id, message.parent_channel_id)
        self.groups[message.channel_id] = (time.monotonic(), group)
        return group

    def _reply_with_tools(
        self,
        message: Incoming,
        group_name: str,
        speaker: str,
        payload: dict[str, Any],
        triggered: list[str],
        narrated: list[dict[str, str]],
    ) -> ModelReply:
        """The speaker's reply once its tool calls are answered: each round's calls are carried out and
        their results handed back in the provider's shape, until the model answers without a call (at
        most TOOL_ROUNDS_MAX rounds). The reply's text is every round's text, in order."""
        texts: list[str] = []
        made: list[tuple[str, dict[str, Any]]] = []
        for round_ in range(TOOL_ROUNDS_MAX + 1):
            reply = self.model.complete(self.http, payload)
            texts.append(reply.text)
            made.extend(reply.calls)
            results = []
            for tool, args in reply.calls:
                try:
                    narrator, result = self._run_tool(message, group_name, speaker, tool, args, triggered)
                except (
                    TavernkeepError
                ) as exc:  # a bad id or an over-long note: the model is told, the loop goes on
                    log.warning("%s's %s call in %s: %s", speaker, tool, group_name, exc)
                    narrator, result = None, {"error": str(exc)}
                if narrator is not None:
                    narrated.append(narrator)
                results.append(result)
            if not reply.calls or round_ == TOOL_ROUNDS_MAX:
                break
            payload = with_tool_results(self.model.provider, payload, reply, results)
        text = "\n\n".join(t.strip() for t in texts if t.strip())
        return ModelReply(text=text, calls=made)

    def _run_tool(
        self,
        message: Incoming,
        group_name: str,
        speaker: str,
        tool: str,
        args: dict[str, Any],
        triggered: list[str],
    ) -> tuple[dict[str, str] | None, Any]:
        """One tool call of a speaker's reply: a narrator line for the next speakers (or None) and the
        result handed back to the model."""
        server = message.guild_id
        if tool == MEMORY_TOOL:
            if not isinstance(args.get("summary"), str):
                return None, {"error": "`summary` must be text."}
            self.tavernkeep.update_summary(
                server, message.channel_id, message.author_id, args["summary"][:1500]
            )
            return None, {"kept": True}
        if tool == SET_NOTE:
            kept = self.tavernkeep.set_note(
                server, group_name, message.channel_id, args.get("id"), str(args.get("text", ""))
            )
            return None, kept
        if tool == TRIGGER_MEMBER:
            said = str(args.get("message", ""))[:2000]
            member = self.tavernkeep.trigger(server, group_name, message.channel_id, args.get("id"), said)
            triggered.append(member)
            line = {"role": "system", "name": speaker, "content": f"{speaker} to {member}: {said}"}
            return (line if said else None), {"answers_next": member}
        if tool == LIST_MEMBERS:
            members = self.tavernkeep.group(server, group_name)["members"]
            listed = ", ".join(
                f"{m['name']} (id {m['id']}{', muted' if m['muted'] else ''})" for m in members
            )
            line = {"role": "system", "name": speaker, "content": f"Members of {group_name}: {listed}"}
            return line, [{"id": m["id"], "name": m["name"], "muted": m["muted"]} for m in members]
        if tool in CHANNEL_TOOLS:
            return None, self.tavernkeep.channel_tool(server, message.channel_id, tool, args)
        return None, {"error": f"There is no tool named {tool!r}."}


# -- stored channel conversations (docs/bot.md, "Stored conversations") -------------------------------
# Tavernkeep keeps the channel's conversation as the bot reports it, so per-message variables follow
# edits, deletions, regenerations and swipes. The bot forwards what happens in the channel and
# assembles with `"conversation": <channel>` instead of sending the history and variables itself.

REGENERATE, SWIPE_BACK, SWIPE_NEXT = "\N{CLOCKWISE RIGHTWARDS AND LEFTWARDS OPEN CIRCLE ARROWS}", "◀", "▶"


class ChannelStore:
    """The channel conversation API (…/channels/<C>/messages, …/conversation): answers 200 or 201; a
    message Tavernkeep does not store (an edit or deletion of one it never saw) is None, not an error."""

    def __init__(self, tavernkeep: Tavernkeep) -> None:
        self.tavernkeep = tavernkeep

    def _send(self, method: str, server_id: str, path: str, body: Any = None) -> dict[str, Any] | None:
        tk = self.tavernkeep
        url = f"{tk.base_url}/api/v1/servers/{server_id}/{path}"
        headers = {"Authorization": f"Bearer {tk.token_for(server_id)}"}
        try:
            response = tk.http.request(method, url, json=body, headers=headers, timeout=30)
        except httpx.HTTPError as exc:
            raise TavernkeepError(f"Tavernkeep {path}: could not reach {tk.base_url} ({exc}).") from None
        if response.status_code == 404 and method in ("PATCH", "DELETE", "PUT"):
            return None
        if response.status_code == 201:  # a new message or swipe
            try:
                return dict(response.json())
            except ValueError:
                pass
        return answer_of(path, response)

    def post(self, server_id: str, channel_id: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = self._send("POST", server_id, f"channels/{channel_id}/messages", body)
        assert answer is not None
        return answer

    def edit(self, server_id: str, channel_id: str, message_id: str, content: str) -> dict[str, Any] | None:
        return self._send(
            "PATCH", server_id, f"channels/{channel_id}/messages/{message_id}", {"content": content}
        )

    def delete(self, server_id: str, channel_id: str, message_id: str) -> dict[str, Any] | None:
        return self._send("DELETE", server_id, f"channels/{channel_id}/messages/{message_id}")

    def add_swipe(
        self, server_id: str, channel_id: str, message_id: str, content: str
    ) -> dict[str, Any] | None:
        path = f"channels/{channel_id}/messages/{message_id}/swipes"
        return self._send("POST", server_id, path, {"content": content})

    def switch_swipe(
        self, server_id: str, channel_id: str, message_id: str, index: int
    ) -> dict[str, Any] | None:
        path = f"channels/{channel_id}/messages/{message_id}/swipes/current"
        return self._send("PUT", server_id, path, {"index": index})

    def conversation(self, server_id: str, channel_id: str) -> dict[str, Any] | None:
        try:
            return self._send("GET", server_id, f"channels/{channel_id}/conversation")
        except TavernkeepError:
            return None


@dataclass
class Reply:
    """A reply the bot posted: its Discord ids (the first is the reply's) and who asked for it."""

    ids: list[str]
    asker_id: str
    content: str
    speaker: str | None = None  # a group member's reply: the member, and its group
    group: str | None = None


class StoredCore:
    """The loop on a stored conversation: the bot forwards the channel's events and asks Tavernkeep to
    assemble from what it stores. `send(text) -> id` and `edit(id, text)` post and change the
    bot's Discord messages in the channel (the Discord side gives them; tests give a recording one)."""

    def __init__(self, core: BotCore) -> None:
        self.core = core
        self.store = ChannelStore(core.tavernkeep)
        self.replies: dict[str, Reply] = {}  # the reply's first id → what the bot knows of it

    def seen(self, message: Incoming, message_id: str) -> dict[str, Any]:
        """Store a member's message (every message of a guild channel, answered or not)."""
        body = {
            "id": message_id,
            "role": "user",
            "author": {"id": message.author_id, "name": message.author_name},
            "content": message.content,
        }
        if message.parent_channel_id:
            body["parent"] = message.parent_channel_id
        return self.store.post(message.guild_id, message.channel_id, body)

    def _assemble(
        self, message: Incoming, asker_name: str, char: str | None = None, **extra: Any
    ) -> tuple[str, dict[str, Any]]:
        context = {"channel": message.channel_id, "user": message.author_id, "has_tools": True}
        if message.parent_channel_id:
            context["parent_channel"] = message.parent_channel_id
        core = self.core
        assembled = core.tavernkeep.assemble(
            message.guild_id,
            {
                "conversation": message.channel_id,
                "names": {"user": asker_name, "char": char or core.bot_name},
                "stm_context": {**context, "provider": core.model.provider},
                "provider": core.model.provider,
                **extra,
            },
        )
        reply = core.model.complete(core.http, assembled["provider_payload"])
        if reply.summary:
            core.tavernkeep.update_summary(
                message.guild_id, message.channel_id, message.author_id, reply.summary[:1500]
            )
        return core.tavernkeep.clean(message.guild_id, reply.text, asker_name), assembled

    def answer(
        self, message: Incoming, message_id: str, send: Callable[[str], str], edit: Callable[[str, str], None]
    ) -> Reply:
        """Store the member's message, assemble from the channel, and post the reply without its write
        macros: a placeholder first (the reply's id), the reply stored under it, then its text."""
        self.seen(message, message_id)
        shown, _ = self._assemble(message, message.author_name)
        reply = self._post_reply(message, shown, send, edit)
        self.core.tavernkeep.store_turn(
            message.guild_id,
            {
                "channel": message.channel_id,
                "parent_channel": message.parent_channel_id,
                "user": message.author_id,
                "user_name": message.author_name,
                "messages": [
                    {"role": "user", "name": message.author_name, "content": message.content},
                    {"role": "assistant", "name": self.core.bot_name, "content": reply.content},
                ],
            },
        )
        return reply

    def _post_reply(
        self,
        message: Incoming,
        shown: str,
        send: Callable[[str], str],
        edit: Callable[[str, str], None],
        *,
        speaker: str | None = None,
        group: str | None = None,
    ) -> Reply:
        """Post a reply without its write macros: a placeholder first (the reply's id), the reply stored
        under it (a group member's with `speaker`), then the stored text, in pieces; further pieces
        become the reply's parts."""
        first = send("…")
        body = {
            "id": first,
            "role": "assistant",
            "author": {"name": speaker or self.core.bot_name},
            "content": shown,
        }
        if speaker:
            body["speaker"] = speaker
        stored = self.store.post(message.guild_id, message.channel_id, body)
        pieces = split_for_discord(stored["message"]["content"]) or ["…"]
        edit(first, pieces[0])
        ids = [first, *(send(piece) for piece in pieces[1:])]
        if len(ids) > 1:  # the same id again with the further pieces: they become the reply's parts
            self.store.post(
                message.guild_id,
                message.channel_id,
                {"id": first, "role": "assistant", "content": shown, "parts": ids[1:]},
            )
        reply = Reply(ids, message.author_id, stored["message"]["content"], speaker=speaker, group=group)
        self.replies[first] = reply
        return reply

    def answer_group(
        self,
        message: Incoming,
        message_id: str,
        group: dict[str, Any],
        post: Callable[[Post], list[str]],
        edit: Callable[[str, str], None],
    ) -> list[Reply]:
        """The group loop of docs/bot.md on the stored conversation: store the member's message, ask
        `next` who answers (it reads the stored conversation), then each speaker in order (a triggered
        member first), at most GROUP_REPLIES_MAX turns: assembled from the conversation as that member,
        its tool calls answered, posted under its name (`post` returns the Discord ids of the pieces it
        posted) and stored with `speaker`. A narrator line (a trigger's message, the member list) is
        never posted: it is kept as a private context of each member who answers after it."""
        core, server, name, channel = self.core, message.guild_id, group["name"], message.channel_id
        self.seen(message, message_id)
        context = {"channel": channel, "user": message.author_id, "has_tools": True}
        if message.parent_channel_id:
            context["parent_channel"] = message.parent_channel_id
        speakers = deque(core.tavernkeep.next_speakers(server, name, seed=core.seed, conversation=channel))
        avatars = {m["name"]: m.get("avatar_url") for m in group.get("members", [])}
        replies: list[Reply] = []
        turns = 0
        while speakers and turns < GROUP_REPLIES_MAX:
            speaker = speakers.popleft()
            turns += 1
            assembled = core.tavernkeep.assemble(
                server,
                {
                    "conversation": channel,
                    "names": {"user": message.author_name, "char": speaker},
                    "stm_context": {**context, "provider": core.model.provider},
                    "provider": core.model.provider,
                    "group": {"name": name, "speaker": speaker},
                    "group_tools": True,
                },
            )
            triggered: list[str] = []
            narrated: list[dict[str, str]] = []
            reply = core._reply_with_tools(
                message, name, speaker, assembled["provider_payload"], triggered, narrated
            )
            shown = core.tavernkeep.clean(server, reply.text, message.author_name)
            if shown.strip():

                def send(text: str, speaker: str = speaker) -> str:
                    return post(Post([text], name=speaker, avatar_url=avatars.get(speaker)))[0]

                replies.append(self._post_reply(message, shown, send, edit, speaker=speaker, group=name))
            speakers.extendleft(reversed(triggered))
            self._keep_narration(message, narrated, list(speakers)[: GROUP_REPLIES_MAX - turns])
        core.tavernkeep.store_turn(
            server,
            {
                "channel": channel,
                "parent_channel": message.parent_channel_id,
                "user": message.author_id,
                "user_name": message.author_name,
                "messages": [
                    {"role": "user", "name": message.author_name, "content": message.content},
                    *({"role": "assistant", "name": r.speaker, "content": r.content} for r in replies),
                ],
            },
        )
        return replies

    def _keep_narration(self, message: Incoming, lines: list[dict[str, str]], after: list[str]) -> None:
        """Each narrator line, as a private context (`add_agent_context`) of every member who answers
        after it for this message: in their prompts, at its place, and never in the channel."""
        for line in lines:
            for member in dict.fromkeys(after):
                try:
                    self.core.tavernkeep.channel_tool(
                        message.guild_id,
                        message.channel_id,
                        "add_agent_context",
                        {"member": member, "text": line["content"][:PRIVATE_CONTEXT_MAX_CHARS]},
                    )
                except TavernkeepError as exc:
                    log.warning("narrator line for %s not kept: %s", member, exc)

    def regenerate(
        self,
        guild_id: str,
        channel_id: str,
        reply_id: str,
        by: str,
        by_name: str,
        edit: Callable[[str, str], None],
    ) -> dict[str, Any] | None:
        """🔁 by the member who asked: a new reply as a new swipe, edited in place. Others' reactions,
        and replies the bot does not know, change nothing (None)."""
        known = self.replies.get(reply_id)
        if known is None or known.asker_id != by:
            return None
        asked = Incoming(guild_id, channel_id, by, by_name, "")
        as_member = {"group": {"name": known.group, "speaker": known.speaker}} if known.group else {}
        shown, _ = self._assemble(asked, by_name, known.speaker, regenerate=reply_id, **as_member)
        answer = self.store.add_swipe(guild_id, channel_id, reply_id, shown)
        if answer is not None:
            self._show(answer, edit)
        return answer

    def switch(
        self, guild_id: str, channel_id: str, reply_id: str, step: int, edit: Callable[[str, str], None]
    ) -> dict[str, Any] | None:
        """◀ (step -1) or ▶ (step +1) on a reply: show the swipe before or after the current one."""
        stored = self.store.conversation(guild_id, channel_id)
        message = next((m for m in (stored or {}).get("messages", []) if m["id"] == reply_id), None)
        if message is None or not 0 <= message["swipe"] + step < message["swipes"]:
            return None
        answer = self.store.switch_swipe(guild_id, channel_id, reply_id, message["swipe"] + step)
        if answer is not None:
            self._show(answer, edit)
        return answer

    def _show(self, answer: dict[str, Any], edit: Callable[[str, str], None]) -> None:
        """Edit the reply's Discord messages to the stored swipe (a longer swipe is cut to its parts)."""
        message = answer["message"]
        ids = [message["id"], *message.get("parts", [])]
        pieces = split_for_discord(message["content"]) or ["…"]
        for index, message_id in enumerate(ids):
            edit(message_id, pieces[index] if index < len(pieces) else "\N{ZERO WIDTH SPACE}")
        if message["id"] in self.replies:
            self.replies[message["id"]].content = message["content"]

    def edited(self, guild_id: str, channel_id: str, message_id: str, content: str) -> dict[str, Any] | None:
        """A member edited a message: the stored text changes (nothing is extracted again)."""
        return self.store.edit(guild_id, channel_id, message_id, content)

    def deleted(self, guild_id: str, channel_id: str, message_ids: list[str]) -> list[dict[str, Any]]:
        """Messages deleted (one, or a bulk deletion): each and its ops are gone. Several parts of one
        reply are one deletion; the ones after it are unknown by then and skipped."""
        answers = []
        for message_id in message_ids:
            answer = self.store.delete(guild_id, channel_id, message_id)
            if answer is not None:
                answers.append(answer)
            self.replies.pop(message_id, None)
        return answers


# -- Discord ---------------------------------------------------------------------------------------------


PROVIDERS = ("openai", "anthropic", "gemini")


# A bot token is three base64url parts joined by dots (the bot's id, a timestamp, a signature).
DISCORD_TOKEN_SHAPE = re.compile(r"[\w-]{10,}\.[\w-]{4,}\.[\w-]{10,}")


class ConfigError(Exception):
    """A missing or malformed setting; the message is one sentence saying what to set."""


@dataclass
class Config:
    url: str
    tokens: dict[str, str] | str
    discord_token: str
    model: Model
    bot_name: str


def config_from(environ: Mapping[str, str]) -> Config:
    """The bot's settings from the environment, or ConfigError naming what is missing."""

    def required(name: str, what: str) -> str:
        value = environ.get(name, "").strip()
        if not value:
            raise ConfigError(f"Set {name}: {what}.")
        return value

    url = required("TAVERNKEEP_URL", "Tavernkeep's address, such as http://127.0.0.1:8000")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"TAVERNKEEP_URL must start with http:// or https:// (it is {url!r}).")
    per_guild: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in environ.get("TAVERNKEEP_TOKENS", "").split(","))):
        guild, _, token = pair.partition("=")
        if not guild.strip().isdigit() or not token.strip():
            raise ConfigError(
                f"TAVERNKEEP_TOKENS takes <guild id>=<token> pairs separated by commas; {pair.split('=')[0]!r}… is not one."
            )
        per_guild[guild.strip()] = token.strip()
    tokens: dict[str, str] | str = per_guild or environ.get("TAVERNKEEP_TOKEN", "").strip()
    if not tokens:
        raise ConfigError(
            "Set TAVERNKEEP_TOKENS to <guild id>=<token> pairs (one token per guild, made on that server's "
            "Tokens page in Tavernkeep), or TAVERNKEEP_TOKEN for a bot in one guild."
        )
    provider = environ.get("MODEL_PROVIDER", "openai").strip() or "openai"
    if provider not in PROVIDERS:
        raise ConfigError(f"MODEL_PROVIDER must be one of {', '.join(PROVIDERS)} (it is {provider!r}).")
    model = Model(
        provider,
        required("MODEL_URL", "the model's full streaming endpoint"),
        required("MODEL_KEY", "the model provider's API key"),
        environ.get("MODEL_NAME", "").strip(),
    )
    discord_token = required("DISCORD_TOKEN", "the bot's token from Discord's developer portal")
    if not DISCORD_TOKEN_SHAPE.fullmatch(discord_token):
        raise ConfigError(
            "DISCORD_TOKEN does not look like a bot token (three parts separated by dots): copy it again "
            "from the Bot page of Discord's developer portal."
        )
    return Config(url, tokens, discord_token, model, environ.get("BOT_NAME", "Bot").strip() or "Bot")


def forward_channel_events(
    client: Any, stored: StoredCore, discord: Any, hooked: dict[str, tuple[Any, dict[str, Any]]]
) -> Callable[..., Any]:  # pragma: no cover
    """Forward a guild channel's edits, deletions (one or in bulk) and reactions to Tavernkeep's stored
    conversation (never a DM's), and return how on_message stores a message and answers a mention.
    `hooked` maps the ids of the messages a webhook posted (a group member's replies) to that webhook
    and its keywords: those are edited through it."""
    import asyncio

    def on_loop(coroutine: Any) -> Any:  # called from the core's thread: run on Discord's loop, wait
        return asyncio.run_coroutine_threadsafe(coroutine, client.loop).result()

    def sender(channel: Any) -> Callable[[str], str]:
        return lambda text: str(on_loop(channel.send(text)).id)

    def editor(channel: Any) -> Callable[[str, str], None]:
        def edit(message_id: str, text: str) -> None:
            if message_id in hooked:
                hook, where = hooked[message_id]
                on_loop(hook.edit_message(int(message_id), content=text, **where))
            else:
                on_loop(channel.get_partial_message(int(message_id)).edit(content=text))

        return edit

    async def answer_stored(
        message: Any, incoming: Incoming, mentioned: bool, group: Any = None, post: Any = None
    ) -> None:
        if group is not None:  # every user message in a group channel goes to the group
            async with message.channel.typing():
                await asyncio.to_thread(
                    stored.answer_group, incoming, str(message.id), group, post, editor(message.channel)
                )
            return
        if not mentioned:
            await asyncio.to_thread(stored.seen, incoming, str(message.id))
            return
        async with message.channel.typing():
            await asyncio.to_thread(
                stored.answer, incoming, str(message.id), sender(message.channel), editor(message.channel)
            )

    async def forward(call: Callable[..., Any], *args: Any) -> None:
        try:
            await asyncio.to_thread(call, *args)
        except (TavernkeepError, httpx.HTTPError) as exc:
            log.warning("channel event not stored: %s", exc)

    forward_raw_events(client, stored, forward, editor)
    return answer_stored


def forward_raw_events(
    client: Any,
    stored: StoredCore,
    forward: Callable[..., Awaitable[None]],
    editor: Callable[[Any], Callable[[str, str], None]],
) -> None:  # pragma: no cover
    """Forward edits, deletions (one or in bulk) and the regenerate and swipe reactions of a guild's
    channels (never a DM's) to the stored conversation."""

    @client.event
    async def on_raw_message_edit(payload: Any) -> None:
        author = (payload.data.get("author") or {}).get("id")
        if (
            payload.guild_id is None
            or "content" not in payload.data
            or author == str(client.user.id)
            or payload.data.get("webhook_id")
        ):
            return  # a DM, an embed-only update, or the bot's own edit or its webhook's (stored already)
        await forward(
            stored.edited,
            str(payload.guild_id),
            str(payload.channel_id),
            str(payload.message_id),
            payload.data["content"],
        )

    @client.event
    async def on_raw_message_delete(payload: Any) -> None:
        if payload.guild_id is not None:
            await forward(
                stored.deleted, str(payload.guild_id), str(payload.channel_id), [str(payload.message_id)]
            )

    @client.event
    async def on_raw_bulk_message_delete(payload: Any) -> None:
        if payload.guild_id is not None:
            ids = [str(i) for i in sorted(payload.message_ids)]
            await forward(stored.deleted, str(payload.guild_id), str(payload.channel_id), ids)

    @client.event
    async def on_raw_reaction_add(payload: Any) -> None:
        if payload.guild_id is None or payload.user_id == client.user.id:
            return
        channel = client.get_channel(payload.channel_id) or await client.fetch_channel(payload.channel_id)
        where = (str(payload.guild_id), str(payload.channel_id), str(payload.message_id))
        emoji = str(payload.emoji)
        if emoji == REGENERATE:
            name = payload.member.display_name if payload.member else str(payload.user_id)
            async with channel.typing():
                await forward(stored.regenerate, *where, str(payload.user_id), name, editor(channel))
        elif emoji in (SWIPE_BACK, SWIPE_NEXT):
            await forward(stored.switch, *where, -1 if emoji == SWIPE_BACK else 1, editor(channel))


def run() -> None:  # pragma: no cover - needs Discord
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    try:
        config = config_from(os.environ)
    except ConfigError as exc:
        sys.exit(f"error: {exc}")
    try:
        import discord  # examples/requirements.txt; the core above does not need it
    except ImportError:
        sys.exit("error: discord.py is not installed: pip install -r examples/requirements.txt")

    intents = discord.Intents.default()
    intents.message_content = True
    intents.members = True
    intents.reactions = True
    client = discord.Client(intents=intents)
    http = httpx.Client()
    core = BotCore(Tavernkeep(config.url, config.tokens, http), config.model, http, bot_name=config.bot_name)
    hooked: dict[str, tuple[Any, dict[str, Any]]] = {}  # a webhook's message id → the webhook, its thread
    answer_stored = forward_channel_events(client, StoredCore(core), discord, hooked)
    answer_guild_events(client, core, answer_stored, member_poster(client, discord, config.bot_name, hooked))
    connect(client, config.discord_token, discord)


def directory_of(guild: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:  # pragma: no cover
    """The guild's channels and members as the directory push sends them (the first 1000 and 5000)."""
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


def member_poster(
    client: Any, discord: Any, bot_name: str, hooked: dict[str, tuple[Any, dict[str, Any]]]
) -> Callable[[Any, Post], Coroutine[Any, Any, list[str]]]:  # pragma: no cover
    """How a group member's reply is posted: through the bot's webhook under the member's name and
    avatar, or, when the webhook cannot be used, as the bot with the member's name in bold. It
    answers the posted ids; the webhook's are kept in `hooked`, to be edited through it later."""
    webhooks: dict[int, Any] = {}

    async def webhook_for(channel: Any) -> Any:
        """The bot's webhook in the channel (a thread's: its parent's), made once; needs Manage Webhooks."""
        target = channel.parent if isinstance(channel, discord.Thread) else channel
        if target.id not in webhooks:
            mine = [hook for hook in await target.webhooks() if hook.user == client.user]
            webhooks[target.id] = mine[0] if mine else await target.create_webhook(name="Tavernkeep")
        return webhooks[target.id]

    async def post_as_member(channel: Any, post: Post) -> list[str]:
        in_thread = {"thread": channel} if isinstance(channel, discord.Thread) else {}
        pieces = list(post.pieces)
        ids: list[str] = []
        try:
            hook = await webhook_for(channel)
            while pieces:
                name = (post.name or bot_name)[:80]
                sent = await hook.send(
                    pieces[0], username=name, avatar_url=post.avatar_url, wait=True, **in_thread
                )
                ids.append(str(sent.id))
                hooked[str(sent.id)] = (hook, in_thread)
                pieces.pop(0)
        except discord.HTTPException as exc:  # no Manage Webhooks, or a name Discord refuses for webhooks
            log.warning("webhook post as %s in #%s: %s; posting as the bot", post.name, channel, exc)
            for piece in split_for_discord(f"**{post.name}**: {' '.join(pieces)}"):
                ids.append(str((await channel.send(piece)).id))
        return ids

    return post_as_member


def answer_guild_events(
    client: Any,
    core: BotCore,
    answer_stored: Callable[..., Any],
    post_as_member: Callable[[Any, Post], Coroutine[Any, Any, list[str]]],
) -> None:  # pragma: no cover
    """Push a joined guild's directory, and answer each member's message through the stored
    conversation (`answer_stored`; a group channel's by the group)."""
    import asyncio

    @client.event
    async def on_guild_join(guild: Any) -> None:
        try:
            await asyncio.to_thread(core.tavernkeep.push_directory, str(guild.id), *directory_of(guild))
        except TavernkeepError as exc:
            log.warning("joined %s: %s", guild.name, exc)

    @client.event
    async def on_message(message: Any) -> None:
        if message.author.bot or message.webhook_id or message.guild is None:  # members' posts too
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
        loop = asyncio.get_running_loop()

        def post(reply: Post) -> list[str]:  # called from the core's thread: post now, in order
            return asyncio.run_coroutine_threadsafe(post_as_member(message.channel, reply), loop).result()

        try:
            group = await asyncio.to_thread(core.group_of, incoming)
            await answer_stored(message, incoming, client.user in message.mentions, group, post)
        except NoToken as exc:
            log.info("skipped %s: %s", message.guild.name, exc)
        except (TavernkeepError, httpx.HTTPError) as exc:
            log.warning("no answer in %s #%s: %s", message.guild.name, message.channel, exc)


def connect(client: Any, discord_token: str, discord: Any) -> None:  # pragma: no cover
    """Run the bot until it stops; a refused token, missing intents or no network end it with one
    `error:` line saying what to fix."""
    try:
        client.run(discord_token, log_handler=None)
    except discord.LoginFailure:
        sys.exit(
            "error: Discord refused DISCORD_TOKEN: reset the token on the Bot page of the developer portal and set the new one."
        )
    except discord.PrivilegedIntentsRequired:
        sys.exit(
            "error: Discord refused the bot's intents: turn on Message Content Intent and Server Members "
            "Intent on the Bot page of the developer portal."
        )
    except (OSError, discord.GatewayNotFound, discord.HTTPException) as exc:
        sys.exit(
            f"error: could not reach Discord ({type(exc).__name__}): check this machine's network and DNS."
        )


if __name__ == "__main__":
    run()
