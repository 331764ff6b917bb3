"""The bot's group API (docs/groups.md, docs/bot.md), token auth by `servers.api_auth.api_view`.

GET   /api/v1/servers/<id>/groups                      the server's groups, members with ids, and the channels using each
GET   /api/v1/servers/<id>/groups/<name>               one group (the list_group_members tool's answer), with each
      member's public `avatar_url`
PUT   /api/v1/servers/<id>/groups/<name>               create or replace it: {members, muted?, mode?, join_prefix?,
      join_suffix?, strategy?, allow_self_responses?} (the `group create` options, the same refusals)
DELETE /api/v1/servers/<id>/groups/<name>              delete it (its channels go back to the server's character)
GET   /api/v1/servers/<id>/channels/<channel>/group    the group a channel uses (?parent=<thread's parent>), or null
      (members with their `avatar_url`, as the group's GET)
PUT   /api/v1/servers/<id>/channels/<channel>/group    {"group": name | null} sets it; DELETE clears it
POST  /api/v1/servers/<id>/groups/<name>/next          who answers next: {messages: [{role, name, content}], seed?,
      trigger?: {member, message, channel?}} → {speakers: [names], strategy, seed}; `conversation: <channel>`
      instead of `messages` reads the channel's stored conversation (docs/channels.md)
POST  /api/v1/servers/<id>/groups/<name>/notes         the set_member_note tool: {channel, member, text ≤ 1 500}

Errors are `{"error": one sentence}`. A warm `next` (token and group cached) makes no SQL query.
"""

from __future__ import annotations

import secrets
import time
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from characters.selectors import avatar_path
from conversations.channels import selectors as channel_selectors
from core.resilient_cache import cache_incr
from engine.groups import ChatLine, next_speakers
from servers.api_auth import (
    ApiError,
    api_view,
    json_response,
    read_json_body,
    refuse_unknown_fields,
    token_agent,
)
from servers.models import Server
from servers.snowflakes import read_snowflake, snowflake_or_none, snowflake_text

from . import selectors, services
from .cache import LoadedGroup
from .models import NOTE_MAX_LENGTH

MAX_BODY_BYTES = 256 * 1024
MAX_MESSAGES = 200
MAX_NAME_CHARS = 200
MAX_SEED = 2**63 - 1
ROLES = ("user", "assistant", "system")
# The PUT body: the `group create` options (docs/groups.md#the-api).
GROUP_FIELDS = ("members", "muted", "mode", "join_prefix", "join_suffix", "strategy", "allow_self_responses")


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
            groups.append({**_with_avatars(request, server_id, loaded), "channels": used})
    return json_response({"groups": groups})


@api_view
def group_detail(request: HttpRequest, server_id: int, group_name: str) -> HttpResponse:
    if request.method == "GET":
        return json_response(_with_avatars(request, server_id, _group(server_id, group_name)))
    if request.method == "PUT":
        return _group_put(request, server_id, group_name)
    if request.method == "DELETE":
        row = selectors.group_named(server_id, group_name.strip())
        if row is None:
            raise ApiError(f"This server has no group named “{group_name[:100]}”.", 404)
        services.group_delete(group=row, by=token_agent(request))
        return json_response({"deleted": row.name})
    raise ApiError("Use GET to read a group, PUT to create or replace it, DELETE to delete it.", 405)


def _group_put(request: HttpRequest, server_id: int, group_name: str) -> HttpResponse:
    body = read_json_body(request, max_bytes=MAX_BODY_BYTES)
    if not isinstance(body, dict):
        raise ApiError("The request body must be a JSON object.")
    refuse_unknown_fields(body, GROUP_FIELDS)
    if "members" not in body:
        raise ApiError("`members` must list the members: the server's card names, in order.")
    settings: dict[str, Any] = {
        "members": _names(body["members"], "members"),
        "muted": _names(body.get("muted", []), "muted"),
    }
    for field, default in (
        ("mode", "swap"),
        ("join_prefix", ""),
        ("join_suffix", ""),
        ("strategy", "natural"),
    ):
        value = body.get(field, default)
        if not isinstance(value, str):
            raise ApiError(f"`{field}` must be text.")
        settings[field] = value
    allow = body.get("allow_self_responses", False)
    if not isinstance(allow, bool):
        raise ApiError("`allow_self_responses` must be true or false.")
    existed = selectors.group_named(server_id, group_name.strip()) is not None
    row = services.group_save(
        server=_server(server_id),
        name=group_name,
        allow_self_responses=allow,
        replace=True,
        by=token_agent(request),
        **settings,
    )
    loaded = selectors.loaded_group_fresh(server_id, row.name)
    if loaded is None:  # deleted by another request in between
        raise ApiError(f"This server has no group named “{row.name}”.", 404)
    return json_response(_with_avatars(request, server_id, loaded), status=200 if existed else 201)


def _server(server_id: int) -> Server:
    # api_view has checked the token's server: it exists
    return Server.objects.get(pk=server_id)


def _names(value: Any, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise ApiError(f"`{field}` must be a list of card names.")
    return value


def _with_avatars(request: HttpRequest, server_id: int, loaded: LoadedGroup) -> dict[str, Any]:
    """The group as the API answers it: each member with its id and public `avatar_url`."""
    answer: dict[str, Any] = dict(selectors.group_json(loaded, with_ids=True))
    answer["members"] = [
        {**member, "avatar_url": request.build_absolute_uri(avatar_path(server_id, member_id))}
        for member, member_id in zip(answer["members"], loaded.ids, strict=True)
    ]
    return answer


@api_view
def channel_group(request: HttpRequest, server_id: int, channel_id: int) -> HttpResponse:
    if request.method in ("PUT", "DELETE"):
        return _channel_group_set(request, server_id, channel_id)
    if request.method != "GET":
        raise ApiError("Use GET to read a channel's group, PUT to set it, DELETE to clear it.", 405)
    parent = request.GET.get("parent")
    parent_id = snowflake_or_none(parent) if parent else None
    if parent and parent_id is None:
        raise ApiError("`parent` must be a Discord id: a positive whole number.")
    name = selectors.channel_group(server_id, channel_id, parent_id)
    loaded = selectors.loaded_group(server_id, name) if name is not None else None
    return json_response(
        {
            "channel": snowflake_text(channel_id),
            "group": None if loaded is None else _with_avatars(request, server_id, loaded),
        }
    )


def _channel_group_set(request: HttpRequest, server_id: int, channel_id: int) -> HttpResponse:
    """PUT {"group": name | null} gives the channel a group (null clears it); DELETE clears it."""
    group = None
    if request.method == "PUT":
        body = read_json_body(request, max_bytes=MAX_BODY_BYTES)
        if not isinstance(body, dict):
            raise ApiError("The request body must be a JSON object.")
        refuse_unknown_fields(body, ("group",))
        if "group" not in body:
            raise ApiError("`group` must name one of the server's groups (null clears the channel's).")
        name = body["group"]
        if name is not None and not isinstance(name, str):
            raise ApiError("`group` must be a group's name or null.")
        if name is not None:
            group = selectors.group_named(server_id, name.strip())
            if group is None:
                raise ApiError(f"This server has no group named “{name.strip()[:100]}”.", 404)
    services.channel_group_set(
        server=_server(server_id), channel_id=channel_id, group=group, by=token_agent(request)
    )
    loaded = None if group is None else selectors.loaded_group_fresh(server_id, group.name)
    return json_response(
        {
            "channel": snowflake_text(channel_id),
            "group": None if loaded is None else selectors.group_json(loaded, with_ids=True),
        }
    )


@api_view
def group_next(request: HttpRequest, server_id: int, group_name: str) -> HttpResponse:
    body = _object_body(request, ("messages", "conversation", "seed", "trigger"))
    loaded = _group(server_id, group_name)
    seed = _seed(body.get("seed"))
    answer: dict[str, Any] = {"strategy": loaded.group.strategy, "seed": seed}
    trigger = body.get("trigger")
    if trigger is not None:
        member, message = _trigger(trigger, loaded)
        _count_trigger(server_id, trigger.get("channel"), loaded.group.name)
        services.member_trigger_record(
            server_id=server_id,
            group_name=loaded.group.name,
            member=member,
            message=message,
            by=token_agent(request),
        )
        return json_response(
            {"speakers": [member], **answer, "trigger": {"member": member, "message": message}}
        )
    lines = _stored_lines(server_id, body) if "conversation" in body else _messages(body.get("messages", []))
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
    member_id, member_name = services.member_note_set(
        server=server_id,
        group_name=group_name,
        channel_id=channel,
        member=_member_ref(body.get("member")),
        text=text,
        by=token_agent(request),
    )
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


def _stored_lines(server_id: int, body: dict[str, Any]) -> list[ChatLine]:
    """The last stored messages of the channel `conversation` names, as `next` reads them."""
    if "messages" in body:
        raise ApiError("Send either `conversation` or `messages`: the stored conversation is the messages.")
    stored = channel_selectors.stored_chat(server_id, read_snowflake(body, "conversation"))
    if stored is None:
        raise ApiError("`conversation`: this server stores no conversation for that channel.", 404)
    return [
        ChatLine(role=m["role"], name=m["name"], content=m["content"])
        for m in channel_selectors.for_speaker(stored.history, None)[-MAX_MESSAGES:]
    ]


def _member_ref(value: Any) -> str | int:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ApiError("`member` must be a member's name or id.")
    return value


def _count_trigger(server_id: int, channel: Any, group_name: str) -> None:
    """Count a trigger against its channel's minute (the group's, when the bot names no channel);
    ApiError 429 past GROUP_TRIGGERS_PER_MINUTE. Two members that keep triggering each other (a
    loop in the bot, or a model that never stops) are stopped here (docs/groups.md#agents-that-talk-to-each-other)."""
    channel_id = None if channel is None else snowflake_or_none(channel)
    if channel is not None and channel_id is None:
        raise ApiError(
            "`trigger.channel` must be a Discord id: a positive whole number, as a string or a number."
        )
    where = group_name if channel_id is None else str(channel_id)
    now = time.time()
    minute = int(now // 60)
    key = f"group-triggers:{server_id}:{quote(where, safe='')}:{minute}"
    count = cache_incr(key, 60)
    limit = int(settings.GROUP_TRIGGERS_PER_MINUTE)
    if count is not None and count > limit:
        wait = max(1, 60 - int(now % 60))
        place = "this channel" if channel is not None else "this group"
        raise ApiError(
            f"At most {limit} triggers a minute in {place}; try again in {wait} s.", 429, retry_after=wait
        )


def _trigger(value: Any, loaded: LoadedGroup) -> tuple[str, str]:
    if not isinstance(value, dict):
        raise ApiError("`trigger` must be an object {member, message}.")
    refuse_unknown_fields(value, ("member", "message", "channel"), where="`trigger`")
    message = value.get("message", "")
    if not isinstance(message, str):
        raise ApiError("`trigger.message` must be text.")
    if len(message) > services.TRIGGER_MESSAGE_MAX_LENGTH:
        raise ApiError(f"`trigger.message` has at most {services.TRIGGER_MESSAGE_MAX_LENGTH} characters.")
    _, member = services.member_of(loaded, _member_ref(value.get("member")))
    return member, message
