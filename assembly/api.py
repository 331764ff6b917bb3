"""The bot's assemble API: `POST /api/v1/servers/<id>/assemble`.

The body is a bucket document (docs/assembly.md#the-bucket-document) — or `{"buckets": {…}}` — plus optional
request fields:
`provider` (openai | anthropic | gemini: adds `provider_payload`), `style` (merge | standalone),
`native` (true: ignore presets), `preset` (a stored preset's name instead of the active one),
`encoding` (o200k_base | cl100k_base), `channel` and `parent_channel` (the channel or thread the
prompt is for, when the document has no `stm_context` naming it: its own preset wins over the
active one, a thread inherits its parent's), `conversation` (a channel whose stored conversation is
the history and whose variables the render starts from and keeps, docs/channels.md#assembling-from-the-stored-conversation)
and `regenerate` (with `conversation`: the stored reply to regenerate). The answer is the same JSON object `manage.py assemble` prints. A document's `group` turn
(docs/groups.md) names a group and its speaker; an unknown group or a speaker outside it is a 400.
Authentication (401 / 404) is `servers.api_auth.api_view_read_together`'s; errors are `{"error": sentence}`.
With the token, preset and lorebook caches warm and inline STM, a request makes no SQL query, nor
does one from a stored conversation this process read since its last change. When
the document names a channel (`stm_context.channel`) its World Info timed state is read from the
shared cache and the new state stored back (docs/worldinfo.md#timed-effects).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST

from conversations.channels import selectors as channel_selectors
from conversations.channels import services as channel_services
from core.errors import REFUSALS
from core.fairness import fair_share
from engine import parse_buckets
from lorebooks import cache as lorebook_cache
from lorebooks import services as lorebook_services
from servers.api_auth import (
    ApiError,
    api_view_read_together,
    json_response,
    read_json_body,
    refuse_unknown_fields,
)
from servers.generational_cache import channel_stamp_key, read_together
from servers.snowflakes import read_snowflake, snowflake_or_none

from .selectors import assemble_for_server, world_info_channel

REQUEST_FIELDS = (
    "provider",
    "style",
    "native",
    "preset",
    "encoding",
    "channel",
    "parent_channel",
    "conversation",
    "regenerate",
)


def max_body_bytes() -> int:
    return int(getattr(settings, "ASSEMBLE_MAX_BYTES", 4 * 1024 * 1024))


# Read before the token is checked, so that the token's entry comes in the view's one read of the
# shared cache: at most this many bytes, the most a made-up token's request can have parsed (a
# larger body is read after the token's own lookup, as every other API view reads its body).
READ_BEFORE_TOKEN_BYTES = 64 * 1024


def _shared_keys(request: HttpRequest, server_id: int) -> tuple[str, ...] | None:
    """The keys the view reads with the server's generations, from a body of at most
    READ_BEFORE_TOKEN_BYTES; None otherwise, and for a body that is refused (after the token)."""
    length = request.headers.get("Content-Length", "")
    if not length.isdigit() or int(length) > READ_BEFORE_TOKEN_BYTES:
        return None
    try:
        return _keys_for(server_id, read_json_body(request, max_bytes=max_body_bytes()))
    except REFUSALS:  # the body's refusal comes from the view, after the token's
        return None


def _keys_for(server_id: int, body: Any) -> tuple[str, ...]:
    """The channel's World Info timed state and the stored channel's stamp, read with the
    per-server caches' generations in one trip to the shared cache rather than one each."""
    named = body.get("channel", body.get("conversation")) if isinstance(body, dict) else None
    channel = snowflake_or_none(named)  # a bad id is refused by the view, naming its field
    stored = snowflake_or_none(body.get("conversation")) if isinstance(body, dict) else None
    keys: tuple[str, ...] = (
        (lorebook_cache.state_key(server_id, str(channel)),) if channel is not None else ()
    )
    return keys + ((channel_stamp_key(server_id, stored),) if stored is not None else ())


@require_POST
@api_view_read_together(_shared_keys)
@fair_share
def assemble_view(request: HttpRequest, server_id: int) -> HttpResponse:
    body = read_json_body(request, max_bytes=max_body_bytes())
    with read_together(server_id, _keys_for(server_id, body)):  # the token's read, when it made one
        return _assemble(request, server_id, body)


def _assemble(request: HttpRequest, server_id: int, body: Any) -> HttpResponse:
    if not isinstance(body, dict):
        raise ApiError("The request body must be a JSON object (a bucket document).")
    options = {key: body.get(key) for key in REQUEST_FIELDS}
    in_buckets = isinstance(body.get("buckets"), dict)
    document = _ReadKeys(body["buckets"] if in_buckets else _without(body, REQUEST_FIELDS))
    _check_options(options)
    stored = _stored_chat(server_id, options, document)
    doc = parse_buckets(document)
    # A field the bucket parser never asked for is a misspelling (`histroy`), not something to ignore.
    if in_buckets:
        refuse_unknown_fields(body, {*REQUEST_FIELDS, "buckets"})
        refuse_unknown_fields(document, document.asked, where="`buckets`")
    else:
        refuse_unknown_fields(body, {*REQUEST_FIELDS, *document.asked})
    try:
        assembly = assemble_for_server(
            server_id=server_id,
            doc=doc,
            preset_name=options["preset"],
            native=bool(options["native"]),
            style=options["style"],
            provider=options["provider"],
            encoding=options["encoding"] or None,
            channel=options["channel"],
            parent_channel=options["parent_channel"],
            channel_state=True,
        )
    except REFUSALS:
        raise  # shown by api_view_read_together, with its status
    except ValueError as exc:
        raise ApiError(str(exc)) from None
    channel = world_info_channel(doc, options["channel"])
    state = assembly.world_info["state"] if assembly.world_info is not None else None
    # Nothing to write when the state was empty and still is (no timer runs in this channel).
    if channel is not None and state is not None and (state or lorebook_cache.read_state(server_id, channel)):
        lorebook_services.timed_state_save(server_id=server_id, channel=channel, state=state)
    if stored is not None:
        channel_services.render_writes_keep(
            server_id=server_id,
            channel_id=stored.channel_id,
            before=stored.variables,
            after=assembly.variables,
        )
    return json_response(assembly.to_dict())


def _stored_chat(
    server_id: int, options: dict[str, Any], document: dict[str, Any]
) -> channel_selectors.StoredChat | None:
    """The stored conversation `conversation` names, put into the document as its history and
    starting variables (and its channel as the request's, unless one is named); None without it."""
    conversation, regenerate = options["conversation"], options["regenerate"]
    if conversation is None:
        if regenerate is not None:
            raise ApiError("`regenerate` needs `conversation`: the channel whose stored reply it names.")
        return None
    for field in ("history", "variables"):
        if field in document:
            raise ApiError(
                f"Send either `conversation` or `{field}`: the stored conversation is the {field}."
            )
    stored = channel_selectors.stored_chat(server_id, conversation, regenerate=regenerate)
    if stored is None:
        raise ApiError("`conversation`: this server stores no conversation for that channel.", 404)
    group = dict.get(document, "group")  # read without marking it asked: the parser reads it anyway
    speaker = group.get("speaker") if isinstance(group, dict) else None
    document["history"] = channel_selectors.messages_for_speaker(
        stored, speaker.strip() if isinstance(speaker, str) else None
    )
    document["variables"] = stored.variables
    if options["channel"] is None:
        options["channel"] = stored.channel_id
        options["parent_channel"] = options["parent_channel"] or stored.parent_id
    return stored


class _ReadKeys(dict[str, Any]):
    """A bucket document that remembers which top-level fields the parser asked for, so the fields it
    does not know are found without a second list of them to keep in step with engine.parse_buckets."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.asked: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.asked.add(key)
        return super().__contains__(key)


def _without(body: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key not in keys}


def _check_options(options: dict[str, Any]) -> None:
    for key in ("provider", "style", "preset", "encoding"):
        if options[key] is not None and not isinstance(options[key], str):
            raise ApiError(f"`{key}` must be a string.")
    if options["native"] is not None and not isinstance(options["native"], bool):
        raise ApiError("`native` must be true or false.")
    for key in ("channel", "parent_channel", "conversation", "regenerate"):
        options[key] = read_snowflake(options, key, required=False)
