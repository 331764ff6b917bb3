"""Bearer-token authentication for the bot's JSON API.

401 for a missing, malformed or revoked token; 404 for a valid token of another server (as for a
non-member in the dashboard, the API gives no hint that the server exists). What a token digest
means for the server a request names is cached (`servers.generational_cache`, stamp `tokens`, bumped
by every token created or revoked on that server), so a warm request authenticates without touching
the database, and a revocation holds even after Redis comes back from an old snapshot
(docs/reliability.md).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Collection, Iterable
from functools import wraps
from typing import Any

import orjson
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from core.actors import Agent
from core.errors import UserError
from core.fairness import ServerBusy, busy_json, claim_share
from engine import UNSTORABLE_ESCAPE, BucketError, decode_json, refuse_unstorable_text

from .generational_cache import GenerationalCache
from .models import ApiToken, token_digest

_REVOKED = 0


class ApiError(UserError):
    """An error the API answers with `{"error": message}` and the given status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _load_token(key: tuple[int, str]) -> int:
    """The server a token digest belongs to when it is live; 0 when it is unknown or revoked."""
    row = ApiToken.objects.filter(digest=key[1]).values_list("server_id", "revoked_at").first()
    return row[0] if row and row[1] is None else _REVOKED


# Keyed by (the server the request names, digest), so that server's stamp covers the entry: a token
# created or revoked there bumps it. No stale copy: a token is never accepted on an old answer.
TOKENS: GenerationalCache[tuple[int, str], int, int] = GenerationalCache(
    name="apitoken",
    stamp="tokens",
    load=_load_token,
    server_of=lambda key: key[0],
    stale=False,
    valid=lambda plain: isinstance(plain, int),
)


# What a token write bumps (servers.writes.server_write): every process asks the database again
# about any token used on that server.
TOKENS_STAMP = TOKENS.stamp


def server_id_for_token(token: str, *, server_id: int) -> int | None:
    """The server a live token belongs to (asked on behalf of `server_id`), or None when it is
    unknown or revoked."""
    return TOKENS.get((server_id, token_digest(token))) or None


def authenticate_api_request(request: HttpRequest, server_id: int) -> int:
    """Return the server id the request may act on, or raise ApiError (401 / 404)."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 200:
        raise ApiError("Send an API token as 'Authorization: Bearer <token>'.", 401)
    token_server = server_id_for_token(token, server_id=server_id)
    if token_server is None:
        raise ApiError("This API token is not valid (unknown or revoked).", 401)
    if token_server != server_id:
        # Says nothing of the server asked for; only that this token is not its token.
        raise ApiError(
            "No such server for this token: each Discord guild is its own server with its own token "
            "(docs/bot.md, “One guild, one server, one token”).",
            404,
        )
    return server_id


def api_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap a view `view(request, server_id, ...)`: token auth first, ApiError answered as JSON."""

    @csrf_exempt
    @wraps(view)
    def wrapper(request: HttpRequest, server_id: int, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            authenticate_api_request(request, server_id)
            claim_share(server_id)  # every API call counts toward its server's share
            return view(request, server_id, *args, **kwargs)
        except ApiError as exc:
            return JsonResponse({"error": exc.message}, status=exc.status)
        except ServerBusy:
            return busy_json()

    return wrapper


def read_json_body(request: HttpRequest, *, max_bytes: int) -> Any:
    """The request body parsed as JSON, bounded in size before it is read; ApiError otherwise."""
    length = request.headers.get("Content-Length")
    if length and length.isdigit() and int(length) > max_bytes:
        raise ApiError(f"The request body is larger than {max_bytes // 1024} KiB.", 413)
    body = request.read(max_bytes + 1)
    if len(body) > max_bytes:
        raise ApiError(f"The request body is larger than {max_bytes // 1024} KiB.", 413)
    try:
        return decode_json(body, what="The request body")
    except BucketError as exc:
        raise ApiError(exc.message) from None


def refuse_unstorable_upload(raw: bytes | str, *, what: str = "The file") -> None:
    """ApiError (400) naming the field when an uploaded JSON file spells NUL or a lone surrogate;
    the same check `read_json_body` makes (via `decode_json`), for the import endpoints, whose
    importers read the file themselves. A file that is not JSON is left to its importer."""
    text = raw.decode("utf-8-sig", errors="replace") if isinstance(raw, bytes) else raw
    if not UNSTORABLE_ESCAPE.search(text):
        return
    try:
        data = json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return
    try:
        refuse_unstorable_text(data, what=what)
    except BucketError as exc:
        raise ApiError(exc.message) from None


def refuse_unknown_fields(
    body: dict[str, Any], known: Iterable[str], *, where: str = "the request body"
) -> None:
    """ApiError (400) naming the first field of `body` this endpoint does not read: a misspelt field
    (`histroy`) is never silently ignored (docs/bot.md)."""
    names: Collection[str] = known if isinstance(known, (set, frozenset, dict)) else frozenset(known)
    for key in body:
        if key not in names:
            close = difflib.get_close_matches(str(key), sorted(names), n=1)
            hint = (
                f" Did you mean `{close[0]}`?"
                if close
                else f" It reads {', '.join(f'`{n}`' for n in sorted(names))}."
            )
            raise ApiError(f"Unknown field `{key}` in {where}.{hint}")


_DJANGO_ENCODER = DjangoJSONEncoder()


def json_response(data: Any, *, status: int = 200) -> HttpResponse:
    """`data` as a JSON response for the bot's hot endpoints (assemble, clean), encoded by orjson:
    a tenth of the standard encoder's time on an assembly (16 KB: 109 -> 11 µs). Dates and other
    Django types are written as JsonResponse writes them; what orjson refuses (an integer beyond
    64 bits) goes through the standard encoder."""
    try:
        body = orjson.dumps(
            data,
            default=_DJANGO_ENCODER.default,
            option=orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME,
        )
    except orjson.JSONEncodeError:
        body = json.dumps(data, cls=DjangoJSONEncoder, ensure_ascii=False).encode()
    return HttpResponse(body, status=status, content_type="application/json")


def token_agent(request: HttpRequest) -> Agent:
    """The bot as the audit log names it: 'api token <prefix>' (the token's stored prefix, never the rest)."""
    token = request.headers.get("Authorization", "").partition(" ")[2].strip()
    return Agent(f"api token {token[:10]}")
