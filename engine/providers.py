"""Provider adapters (docs/assembly.md#output-cli-api): the neutral message list shaped for OpenAI, Anthropic
and Gemini.

Each adapter returns the request body's message part as a plain dict, and `provider_texts` the
texts that body sends (what the token count of docs/assembly.md#tokens is taken over). When the bot's model
has tools, the body also carries the memory tool's definition (`engine/memory_tool.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .memory_tool import memory_tools
from .parts import Message

EXAMPLE_USER, EXAMPLE_ASSISTANT = "example_user", "example_assistant"

CONVERSATION_START = "(conversation start)"


def shape(
    provider: str, messages: Sequence[Message], *, user: str = "", char: str = "", memory_tool: bool = False
) -> dict[str, Any]:
    """The provider's request body for these messages; raises ValueError for an unknown provider.

    OpenAI keeps each message's `name`; the others have no such field, so a named message gets the
    speaker's name in front of its text, as SillyTavern converts it (sample dialogue turns take the
    user's and the character's display names, `user` and `char`). With `memory_tool` the body also
    declares the update_short_term_memory tool (docs/memory.md)."""
    if provider == "openai":
        body = {"messages": [_openai_message(m) for m in messages]}
    elif provider == "anthropic":
        body = _anthropic(_names_in_content(messages, user, char))
    elif provider == "gemini":
        body = _gemini(_names_in_content(messages, user, char))
    else:
        raise ValueError(f"Unknown provider {provider!r}: use openai, anthropic or gemini.")
    return {**body, "tools": memory_tools(provider)} if memory_tool else body


def _openai_message(m: Message) -> dict[str, str]:
    if m.name:
        return {"role": m.role, "content": m.content, "name": m.name}
    return {"role": m.role, "content": m.content}


def _names_in_content(messages: Sequence[Message], user: str, char: str) -> Sequence[Message]:
    if not any(m.name for m in messages):
        return messages
    out = []
    for m in messages:
        speaker = {EXAMPLE_USER: user, EXAMPLE_ASSISTANT: char}.get(m.name, m.name)
        if m.name and speaker and not m.content.startswith(f"{speaker}: "):
            m = replace(m, content=f"{speaker}: {m.content}", name="")
        out.append(m)
    return out


def provider_texts(provider: str, payload: dict[str, Any]) -> list[str]:
    """Every message text of a shaped payload, the system part first."""
    if provider == "openai":
        return [m["content"] for m in payload["messages"]]
    if provider == "anthropic":
        system = [payload["system"]] if payload.get("system") else []
        return system + [m["content"] for m in payload["messages"]]
    system = [p["text"] for p in payload.get("system_instruction", {}).get("parts", [])]
    return system + ["".join(p["text"] for p in c["parts"]) for c in payload["contents"]]


def _split_leading_system(messages: Sequence[Message]) -> tuple[list[str], list[Message]]:
    index = 0
    while index < len(messages) and messages[index].role == "system":
        index += 1
    return [m.content for m in messages[:index]], list(messages[index:])


def _as_turns(messages: Sequence[Message], assistant_role: str) -> list[tuple[str, str]]:
    turns: list[tuple[str, str]] = []
    for m in messages:
        if m.role == "system":
            role, text = "user", f"[System: {m.content}]"
        else:
            role, text = (assistant_role if m.role == "assistant" else "user"), m.content
        turns.append((role, text))
    return turns


def _merge_same_roles(turns: list[tuple[str, str]]) -> list[tuple[str, str]]:
    merged: list[tuple[str, str]] = []
    for role, text in turns:
        if merged and merged[-1][0] == role:
            merged[-1] = (role, merged[-1][1] + "\n\n" + text)
        else:
            merged.append((role, text))
    return merged


def _anthropic(messages: Sequence[Message]) -> dict[str, Any]:
    system, rest = _split_leading_system(messages)
    turns = _merge_same_roles(_as_turns(rest, "assistant"))
    if not turns or turns[0][0] != "user":
        turns.insert(0, ("user", CONVERSATION_START))
    body: dict[str, Any] = {"messages": [{"role": role, "content": text} for role, text in turns]}
    if system:
        body = {"system": "\n\n".join(system), **body}
    return body


def _gemini(messages: Sequence[Message]) -> dict[str, Any]:
    system, rest = _split_leading_system(messages)
    body: dict[str, Any] = {
        "contents": [{"role": role, "parts": [{"text": text}]} for role, text in _as_turns(rest, "model")]
    }
    if system:
        body = {"system_instruction": {"parts": [{"text": "\n\n".join(system)}]}, **body}
    return body
