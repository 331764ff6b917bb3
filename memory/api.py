"""The bot's short-term memory API (token auth by `servers.api_auth.api_view`).

POST  /api/v1/servers/<id>/stm/turns     store a turn's messages (keeps the last 10, refreshes)
POST  /api/v1/servers/<id>/stm/summary   the update_short_term_memory tool (≤ 1500 chars, else 400)
GET   /api/v1/servers/<id>/stm/entries   the server's live entries, newest first (?channel=)
POST  /api/v1/servers/<id>/stm/users/<user>/opt-in   the user's consent, relayed by this server's bot,
      that this server's memories of them may surface in their other servers {"opt_in": bool};
      {"opt_in": false, "everywhere": true} withdraws the consents the user gave in every server
GET   /api/v1/servers/<id>/directory  the channel and member names the bot pushed
POST  /api/v1/servers/<id>/directory  replace them: {"channels": [{id, name, parent, private}], "members": [{id, display_name}]}
Errors are `{"error": one sentence}`.
"""

from __future__ import annotations

from typing import Any, TypedDict

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from servers import selectors as server_selectors
from servers import services as server_services
from servers.api_auth import ApiError, api_view, read_json_body, refuse_unknown_fields, token_agent
from servers.directory import read_directory
from servers.snowflakes import SNOWFLAKE_MAX, read_snowflake, snowflake_text

from . import selectors, services
from .models import StmEntry

MAX_BODY_BYTES = 256 * 1024
TURN_FIELDS = frozenset(
    ("channel", "parent_channel", "user", "user_name", "channel_name", "lineage", "messages", "summary", "dm")
)
SUMMARY_FIELDS = frozenset(("channel", "user", "lineage", "summary", "dm"))
DIRECTORY_MAX_BYTES = 1024 * 1024


class EntryJson(TypedDict):
    """A short-term memory entry as the API answers it (docs/bot.md)."""

    id: int
    server: str | None
    channel: str | None
    channel_id: str | None
    user: str | None
    user_id: str | None
    lineage: str
    messages: Any
    summary: str
    updated_at: str


def entry_json(entry: StmEntry) -> EntryJson:
    """One entry as the API returns it; Discord ids as strings, since JavaScript loses their digits."""
    return {
        "id": entry.pk,
        "server": snowflake_text(entry.server_id),
        "channel": snowflake_text(entry.channel.discord_id),
        "channel_id": snowflake_text(entry.channel.discord_id),
        "user": snowflake_text(entry.user_id),
        "user_id": snowflake_text(entry.user_id),
        "lineage": entry.lineage,
        "messages": entry.messages,
        "summary": entry.summary,
        "updated_at": entry.updated_at.isoformat(),
    }


def _json(data: Any, status: int = 200) -> JsonResponse:
    return JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False})


def _object_body(request: HttpRequest) -> dict[str, Any]:
    body = read_json_body(request, max_bytes=MAX_BODY_BYTES)
    if not isinstance(body, dict):
        raise ApiError("The request body must be a JSON object.")
    return body


def _lineage(body: dict[str, Any]) -> str:
    lineage = body.get("lineage") or ""
    if not isinstance(lineage, str) or len(lineage) > 100:
        raise ApiError("`lineage` must be text of at most 100 characters.")
    return lineage


def _dm(body: dict[str, Any]) -> bool:
    """`"dm": true` stores a direct-message entry; it still belongs to this server (the token's)."""
    dm = body.get("dm", False)
    if not isinstance(dm, bool):
        raise ApiError("`dm` must be true or false.")
    return dm


@api_view
def store_turn(request: HttpRequest, server_id: int) -> HttpResponse:
    if request.method != "POST":
        return _json({"error": "Use POST to store a turn."}, status=405)
    body = _object_body(request)
    refuse_unknown_fields(body, TURN_FIELDS)
    channel_id = read_snowflake(body, "channel")
    parent_id = read_snowflake(body, "parent_channel", required=False)
    user_id = read_snowflake(body, "user")
    if "messages" not in body:
        raise ApiError("`messages` is required: the turn's messages, [{role, name, content}].")
    entry = services.stm_store_turn(
        server_id=server_id,
        dm=_dm(body),
        channel_id=channel_id,
        parent_id=parent_id,
        user_id=user_id,
        user_name=str(body.get("user_name") or ""),
        channel_name=str(body.get("channel_name") or ""),
        lineage=_lineage(body),
        messages=body["messages"],
        summary=body.get("summary"),
    )
    return _json({"entry": entry_json(entry)})


@api_view
def update_summary(request: HttpRequest, server_id: int) -> HttpResponse:
    if request.method not in ("POST", "PUT"):
        return _json({"error": "Use POST to update a channel's summary."}, status=405)
    body = _object_body(request)
    refuse_unknown_fields(body, SUMMARY_FIELDS)
    if "summary" not in body:
        raise ApiError("`summary` is required.")
    entry = services.stm_update_summary(
        server_id=server_id,
        dm=_dm(body),
        channel_id=read_snowflake(body, "channel"),
        user_id=read_snowflake(body, "user"),
        lineage=_lineage(body),
        summary=body["summary"],
    )
    return _json({"entry": entry_json(entry)})


@api_view
def list_entries(request: HttpRequest, server_id: int) -> HttpResponse:
    if request.method != "GET":
        return _json({"error": "Use GET to list entries."}, status=405)
    channel = read_snowflake(dict(request.GET.items()), "channel", required=False)
    rows = selectors.entries_for_api(server_id=server_id, now=timezone.now(), channel=channel)
    return _json({"entries": [entry_json(row) for row in rows]})


@api_view
def user_opt_in(request: HttpRequest, server_id: int, user_id: int) -> HttpResponse:
    if request.method != "POST":
        return _json({"error": "Use POST to set a user's cross-server opt-in."}, status=405)
    body = _object_body(request)
    refuse_unknown_fields(body, ("opt_in", "everywhere"))
    if not isinstance(body.get("opt_in"), bool):
        raise ApiError("`opt_in` must be true or false.")
    everywhere = body.get("everywhere", False)
    if not isinstance(everywhere, bool):
        raise ApiError("`everywhere` must be true or false.")
    if everywhere and body["opt_in"]:
        raise ApiError("`everywhere` only withdraws: send it with `opt_in: false`.")
    if not 0 < user_id <= SNOWFLAKE_MAX:
        raise ApiError("The user id is not a Discord id.")
    if everywhere:
        withdrawn = services.user_withdraw_consents(
            user_id=user_id, server=server_id, by=token_agent(request)
        )
        return _json(
            {
                "user": snowflake_text(user_id),
                "server": snowflake_text(server_id),
                "cross_server_opt_in": False,
                "withdrawn": withdrawn,
            }
        )
    consent = services.user_set_opt_in(
        user_id=user_id, opt_in=body["opt_in"], server=server_id, by=token_agent(request)
    )
    return _json(
        {"user": snowflake_text(user_id), "server": snowflake_text(server_id), "cross_server_opt_in": consent}
    )


@api_view
def directory(request: HttpRequest, server_id: int) -> HttpResponse:
    if request.method == "POST":
        body = read_json_body(request, max_bytes=DIRECTORY_MAX_BYTES)
        channels, members = read_directory(body)
        skipped = server_services.directory_replace(
            server_id=server_id, channels=channels, members=members, by=token_agent(request)
        )
        answer = _directory_json(server_id)
        answer["skipped_channels"] = [snowflake_text(c) for c in skipped]
        return _json(answer)
    if request.method != "GET":
        return _json({"error": "Use GET to read the directory or POST to replace it."}, status=405)
    return _json(_directory_json(server_id))


def _directory_json(server_id: int) -> dict[str, Any]:
    stored = server_selectors.directory_for(server_id)
    members = stored.members if stored else []
    return {
        "channels": [
            {
                "id": snowflake_text(c.discord_id),
                "name": c.name,
                "parent": snowflake_text(c.parent.discord_id if c.parent else None),
                "private": c.is_private,
            }
            for c in server_selectors.directory_channels(server_id)
        ],
        "members": [{**m, "id": snowflake_text(m["id"])} for m in members],
        "updated_at": stored.updated_at.isoformat() if stored else None,
    }
