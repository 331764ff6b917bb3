"""The bot's channel conversation API (docs/channels.md#events); token auth by `api_view`.

POST   /api/v1/servers/<S>/channels/<C>/messages                      a message seen or posted
PATCH  /api/v1/servers/<S>/channels/<C>/messages/<M>                  an edit (no re-extraction)
DELETE /api/v1/servers/<S>/channels/<C>/messages/<M>                  a deletion
POST   /api/v1/servers/<S>/channels/<C>/messages/<M>/swipes           a regenerated reply
PUT    /api/v1/servers/<S>/channels/<C>/messages/<M>/swipes/current   switch swipes {"index"}
DELETE /api/v1/servers/<S>/channels/<C>/messages/<M>/swipes/<i>       remove a swipe
GET    /api/v1/servers/<S>/channels/<C>/conversation                  messages and variables
DELETE /api/v1/servers/<S>/channels/<C>/conversation                  forget the channel
DELETE /api/v1/servers/<S>/users/<U>/messages                         forget a member
Errors are `{"error": one sentence}`; unknown ids answer 404.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse

from servers import selectors as server_selectors
from servers.api_auth import (
    ApiError,
    api_view,
    json_response,
    read_json_body,
    refuse_unknown_fields,
    token_agent,
)
from servers.snowflakes import SNOWFLAKE_MAX, read_snowflake, snowflake_text

from . import selectors, services
from .services import Posted

MAX_BODY_BYTES = 256 * 1024
MESSAGE_FIELDS = frozenset(("id", "role", "author", "content", "speaker", "parent", "parts", "dm"))
AUTHOR_FIELDS = frozenset(("id", "name"))


def _body(request: HttpRequest) -> dict[str, Any]:
    body = read_json_body(request, max_bytes=MAX_BODY_BYTES)
    if not isinstance(body, dict):
        raise ApiError("The request body must be a JSON object.")
    return body


def _id(value: int, what: str) -> int:
    if not 0 < value <= SNOWFLAKE_MAX:
        raise ApiError(f"The {what} id is not a Discord id.", 404)
    return value


def _text(body: dict[str, Any], field: str, *, required: bool = False) -> str:
    value = body.get(field)
    if value is None:
        if required:
            raise ApiError(f"`{field}` is required.")
        return ""
    if not isinstance(value, str):
        raise ApiError(f"`{field}` must be text.")
    return value


def _answer(posted: Posted, *, status: int | None = None) -> HttpResponse:
    message = selectors.message_json(posted.message, posted.parts) if posted.message is not None else None
    data: dict[str, Any] = {"message": message, "variables": posted.variables}
    if posted.warnings:
        data["warnings"] = list(posted.warnings)
    return json_response(data, status=status or (201 if posted.created else 200))


def _run(call: Any, **kwargs: Any) -> Posted:
    posted: Posted = call(**kwargs)
    return posted


def _method_not_allowed(allowed: str) -> HttpResponse:
    return json_response({"error": f"Use {allowed} on this route."}, status=405)


def _read_parts(body: dict[str, Any]) -> list[int]:
    parts = body.get("parts") or []
    if not isinstance(parts, list):
        raise ApiError("`parts` must be a list of Discord ids.")
    if len(parts) > services.MAX_PARTS:
        raise ApiError(f"`parts` may list at most {services.MAX_PARTS} ids.")
    return [read_snowflake({"parts": part}, "parts") for part in parts]


@api_view
def messages(request: HttpRequest, server_id: int, channel_id: int) -> HttpResponse:
    if request.method != "POST":
        return _method_not_allowed("POST")
    channel_id = _id(channel_id, "channel")
    body = _body(request)
    refuse_unknown_fields(body, MESSAGE_FIELDS)
    if body.get("dm") is True:
        raise ApiError(
            "Direct messages are never stored under a server: send only a server channel's messages."
        )
    if body.get("dm") not in (None, False):
        raise ApiError("`dm` must be true or false.")
    author = body.get("author") or {}
    if not isinstance(author, dict):
        raise ApiError("`author` must be an object: {id, name}.")
    refuse_unknown_fields(author, AUTHOR_FIELDS, where="`author`")
    role = _text(body, "role", required=True)
    if role not in ("user", "assistant"):
        raise ApiError("`role` must be user or assistant.")
    author_id = read_snowflake(author, "id", required=role == "user")
    name = _text(author, "name")
    if len(name) > services.MAX_NAME_CHARS or len(_text(body, "speaker")) > services.MAX_NAME_CHARS:
        raise ApiError(f"`author.name` and `speaker` hold at most {services.MAX_NAME_CHARS} characters.")
    posted = _run(
        services.message_post,
        server_id=server_id,
        channel_id=channel_id,
        message_id=read_snowflake(body, "id"),
        role=role,
        content=_text(body, "content", required=True),
        author_id=author_id,
        author_name=name,
        speaker=_text(body, "speaker"),
        parent_id=read_snowflake(body, "parent", required=False),
        parts=_read_parts(body),
    )
    return _answer(posted)


@api_view
def message(request: HttpRequest, server_id: int, channel_id: int, discord_message_id: int) -> HttpResponse:
    where = {
        "server_id": server_id,
        "channel_id": _id(channel_id, "channel"),
        "message_id": _id(discord_message_id, "message"),
    }
    if request.method == "PATCH":
        body = _body(request)
        refuse_unknown_fields(body, ("content",))
        return _answer(_run(services.message_edit, **where, content=_text(body, "content", required=True)))
    if request.method == "DELETE":
        return _answer(_run(services.message_delete, **where))
    return _method_not_allowed("PATCH or DELETE")


@api_view
def swipes(request: HttpRequest, server_id: int, channel_id: int, discord_message_id: int) -> HttpResponse:
    if request.method != "POST":
        return _method_not_allowed("POST")
    body = _body(request)
    refuse_unknown_fields(body, ("content",))
    return _answer(
        _run(
            services.swipe_add,
            server_id=server_id,
            channel_id=_id(channel_id, "channel"),
            message_id=_id(discord_message_id, "message"),
            content=_text(body, "content", required=True),
        )
    )


@api_view
def swipe_current(
    request: HttpRequest, server_id: int, channel_id: int, discord_message_id: int
) -> HttpResponse:
    if request.method != "PUT":
        return _method_not_allowed("PUT")
    body = _body(request)
    refuse_unknown_fields(body, ("index",))
    if "index" not in body:
        raise ApiError("`index` is required: the swipe's position, from 0.")
    return _answer(
        _run(
            services.swipe_select,
            server_id=server_id,
            channel_id=_id(channel_id, "channel"),
            message_id=_id(discord_message_id, "message"),
            index=body["index"],
        )
    )


@api_view
def swipe(
    request: HttpRequest, server_id: int, channel_id: int, discord_message_id: int, swipe_index: int
) -> HttpResponse:
    if request.method != "DELETE":
        return _method_not_allowed("DELETE")
    return _answer(
        _run(
            services.swipe_delete,
            server_id=server_id,
            channel_id=_id(channel_id, "channel"),
            message_id=_id(discord_message_id, "message"),
            index=swipe_index,
        )
    )


@api_view
def conversation(request: HttpRequest, server_id: int, channel_id: int) -> HttpResponse:
    channel_id = _id(channel_id, "channel")
    if request.method == "GET":
        stored = selectors.conversation_for(server_id, channel_id)
        if stored is None:
            raise ApiError("This server stores no conversation for that channel.", 404)
        parts = selectors.parts_by_message(stored)
        return json_response(
            {
                "channel": snowflake_text(stored.channel_id),
                "parent": snowflake_text(server_selectors.channel_parent(server_id, channel_id)),
                "messages": [
                    selectors.message_json(m, parts.get(m.pk, ())) for m in selectors.messages_of(stored)
                ],
                "variables": stored.variables or {},
            }
        )
    if request.method == "DELETE":
        count = services.conversation_forget(
            server_id=server_id, channel_id=channel_id, by=token_agent(request)
        )
        return json_response({"channel": snowflake_text(channel_id), "forgotten_messages": count})
    return _method_not_allowed("GET or DELETE")


@api_view
def member_messages(request: HttpRequest, server_id: int, user_id: int) -> HttpResponse:
    if request.method != "DELETE":
        return _method_not_allowed("DELETE")
    user_id = _id(user_id, "user")
    count, channels = services.member_forget(server_id=server_id, user_id=user_id, by=token_agent(request))
    return json_response(
        {
            "user": snowflake_text(user_id),
            "forgotten_messages": count,
            "channels": [snowflake_text(c) for c in channels],
        }
    )
