"""Bearer-token authentication for the bot's JSON API.

401 for a missing, malformed or revoked token; 404 for a valid token of another server (as for a
non-member in the dashboard, the API gives no hint that the server exists). Token digests are
cached, so a warm request authenticates without touching the database.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any

import orjson
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from engine import BucketError, decode_json

from .models import ApiToken, token_digest
from .resilient_cache import cache_delete, cache_get, cache_set

TOKEN_CACHE_SECONDS = 300
_REVOKED = 0


class ApiError(Exception):
    """An error the API answers with `{"error": message}` and the given status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def token_cache_key(digest: str) -> str:
    return f"apitoken:{digest}"


def forget_token(digest: str) -> None:
    cache_delete(token_cache_key(digest))


def server_id_for_token(token: str) -> int | None:
    """The server a live token belongs to, or None when it is unknown or revoked."""
    digest = token_digest(token)
    cached = cache_get(token_cache_key(digest))
    if cached is not None:
        return cached or None
    row = ApiToken.objects.filter(digest=digest).values_list("server_id", "revoked_at").first()
    server_id = row[0] if row and row[1] is None else _REVOKED
    cache_set(token_cache_key(digest), server_id, TOKEN_CACHE_SECONDS)
    return server_id or None


def authenticate_api_request(request: HttpRequest, server_id: int) -> int:
    """Return the server id the request may act on, or raise ApiError (401 / 404)."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 200:
        raise ApiError("Send an API token as 'Authorization: Bearer <token>'.", 401)
    token_server = server_id_for_token(token)
    if token_server is None:
        raise ApiError("This API token is not valid (unknown or revoked).", 401)
    if token_server != server_id:
        raise ApiError("No such server.", 404)
    return server_id


def api_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap a view `view(request, server_id, ...)`: token auth first, ApiError answered as JSON."""

    @csrf_exempt
    @wraps(view)
    def wrapper(request: HttpRequest, server_id: int, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            authenticate_api_request(request, server_id)
            return view(request, server_id, *args, **kwargs)
        except ApiError as exc:
            return JsonResponse({"error": exc.message}, status=exc.status)

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
