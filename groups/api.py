"""The bot's group API (docs/groups.md, docs/bot.md), token auth by `servers.api_auth.api_view`.

GET   /api/v1/servers/<id>/groups                      the server's groups, members with ids, and the channels using each
GET   /api/v1/servers/<id>/groups/<name>               one group (the list_group_members tool's answer)
GET   /api/v1/servers/<id>/channels/<channel>/group    the group a channel uses (?parent=<thread's parent>), or null
POST  /api/v1/servers/<id>/groups/<name>/next          who answers next: {messages: [{role, name, content}], seed?,
      trigger?: {member, message}} → {speakers: [names], strategy, seed}
POST  /api/v1/servers/<id>/groups/<name>/notes         the set_member_note tool: {channel, member, text ≤ 1 500}

Errors are `{"error": one sentence}`. A warm `next` (token and group cached) makes no SQL query.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.http import HttpRequest, HttpResponse

from core.actors import Agent
from engine.groups import ChatLine, next_speakers
from servers.api_auth import ApiError, api_view, json_response, read_json_body, refuse_unknown_fields
from servers.snowflakes import read_snowflake, snowflake_or_none, snowflake_text

from . import selectors, services
from .cache import LoadedGroup
from .models import NOTE_MAX_LENGTH

MAX_BODY_BYTES = 256 * 1024
MAX_MESSAGES = 200
MAX_NAME_CHARS = 200
MAX_SEED = 2**63 - 1
ROLES = ("user", "assistant", "system")


def _group(server_id: int, name: str) -> LoadedGroup:
    loaded = selectors.loaded_group(server_id, name)
    if loaded is None:
        raise ApiError(f"This server has no group named “{name[:100]}”.", 404)
    return loaded


def _object_body(request: HttpRequest, fields: tuple[str, ...]) -> dict[str, Any]:
    """The JSON object posted, refused (400) when it has a field outside `fields`."""
    if request.method != "POST":
        raise ApiError("Use POST.", 405)
    body = read_json_body(request, max_bytes=MAX_BODY_BYTES)
    if not isinstance(body, dict):
        raise ApiError("The request body must be a JSON object.")
    refuse_unknown_fields(body, fields)
    return body


@api_view
def group_list(request: HttpRequest, server_id: int) -> HttpResponse:
    if request.method != "GET":
        raise ApiError("Use GET to read the server's groups.", 405)
    channels = selectors.channels_using(server_id)
    groups = []
    for row in selectors.groups_for(server_id):
        loaded = selectors.loaded_group(server_id, row.name)
        if loaded is not None:
            used = [snowflake_text(channel) for channel in channels.get(row.name, [])]
            groups.append({**selectors.group_json(loaded, with_ids=True), "channels": used})
    return json_response({"groups": groups})


@api_view
def group_detail(request: HttpRequest, server_id: int, group_name: str) -> HttpResponse:
    if request.method != "GET":
        raise ApiError("Use GET to read a group.", 405)
    return json_response(selectors.group_json(_group(server_id, group_name), with_ids=True))


@api_view
def channel_group(request: HttpRequest, server_id: int, channel_id: int) -> HttpResponse:
    if request.method != "GET":
        raise ApiError("Use GET to read a channel's group.", 405)
    parent = request.GET.get("parent")
    parent_id = snowflake_or_none(parent) if parent else None
    if parent and parent_id is None:
        raise ApiError("`parent` must be a Discord id: a positive whole number.")
    name = selectors.channel_group(server_id, channel_id, parent_id)
    loaded = selectors.loaded_group(server_id, name) if name is not None else None
    return json_response(
        {
            "channel": snowflake_text(channel_id),
            "group": None if loaded is None else selectors.group_json(loaded, with_ids=True),
        }
    )


@api_view
def group_next(request: HttpRequest, server_id: int, group_name: str) -> HttpResponse:
    body = _object_body(request, ("messages", "seed", "trigger"))
    loaded = _group(server_id, group_name)
    seed = _seed(body.get("seed"))
    answer: dict[str, Any] = {"strategy": loaded.group.strategy, "seed": seed}
    trigger = body.get("trigger")
    if trigger is not None:
        member, message = _trigger(trigger, loaded)
        try:
            services.member_trigger_record(
                server_id=server_id,
                group_name=loaded.group.name,
                member=member,
                message=message,
                by=Agent("api"),
            )
        except services.GroupError as exc:
            raise ApiError(exc.message) from None
        return json_response(
            {"speakers": [member], **answer, "trigger": {"member": member, "message": message}}
        )
    lines = _messages(body.get("messages", []))
    return json_response({"speakers": next_speakers(loaded.group, lines, seed), **answer})


@api_view
def member_note(request: HttpRequest, server_id: int, group_name: str) -> HttpResponse:
    body = _object_body(request, ("channel", "member", "text"))
    channel = read_snowflake(body, "channel")
    text = body.get("text")
    if not isinstance(text, str):
        raise ApiError("`text` must be text (empty removes the note).")
    if len(text) > NOTE_MAX_LENGTH:
        raise ApiError(f"`text` has at most {NOTE_MAX_LENGTH} characters.")
    _group(server_id, group_name)
    try:
        member_id, member_name = services.member_note_set(
            server=server_id,
            group_name=group_name,
            channel_id=channel,
            member=_member_ref(body.get("member")),
            text=text,
            by=Agent("api"),
        )
    except services.GroupError as exc:
        raise ApiError(exc.message) from None
    return json_response(
        {"channel": snowflake_text(channel), "member": {"id": member_id, "name": member_name}, "text": text}
    )


def _seed(value: Any) -> int:
    if value is None:
        return secrets.randbelow(2**32)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        raise ApiError("`seed` must be a whole number from 0 to 2^63 - 1.")
    return value


def _messages(value: Any) -> list[ChatLine]:
    if not isinstance(value, list):
        raise ApiError("`messages` must be a list of {role, name, content}.")
    if len(value) > MAX_MESSAGES:
        raise ApiError(f"Send at most {MAX_MESSAGES} messages (the last ones).")
    lines = []
    for index, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise ApiError(f"`messages[{index}]` must be an object.")
        refuse_unknown_fields(entry, ("role", "name", "content"), where=f"`messages[{index}]`")
        role, name, content = entry.get("role"), entry.get("name", ""), entry.get("content", "")
        if role not in ROLES:
            raise ApiError(f'`messages[{index}].role` must be "user", "assistant" or "system".')
        if not isinstance(name, str) or len(name) > MAX_NAME_CHARS:
            raise ApiError(f"`messages[{index}].name` must be text of at most {MAX_NAME_CHARS} characters.")
        if not isinstance(content, str):
            raise ApiError(f"`messages[{index}].content` must be text.")
        lines.append(ChatLine(role=role, name=name.strip(), content=content))
    return lines


def _member_ref(value: Any) -> str | int:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ApiError("`member` must be a member's name or id.")
    return value


def _trigger(value: Any, loaded: LoadedGroup) -> tuple[str, str]:
    if not isinstance(value, dict):
        raise ApiError("`trigger` must be an object {member, message}.")
    refuse_unknown_fields(value, ("member", "message"), where="`trigger`")
    message = value.get("message", "")
    if not isinstance(message, str):
        raise ApiError("`trigger.message` must be text.")
    if len(message) > services.TRIGGER_MESSAGE_MAX_LENGTH:
        raise ApiError(f"`trigger.message` has at most {services.TRIGGER_MESSAGE_MAX_LENGTH} characters.")
    try:
        _, member = services.member_of(loaded, _member_ref(value.get("member")))
    except services.GroupError as exc:
        raise ApiError(exc.message) from None
    return member, message
