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
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from functools import wraps
from typing import Any

import orjson
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from core.actors import Agent, token_agent_for
from core.client_rate import Buckets
from core.errors import REFUSALS, NameClash, UserError
from core.fairness import RETRY_AFTER_SECONDS, ServerBusy, busy_json, claim_share
from core.login_throttle import client_address
from engine import UNSTORABLE_ESCAPE, BucketError, EngineError, decode_json, refuse_unstorable_text

from .generational_cache import GenerationalCache, read_together
from .models import ApiToken, token_digest

_REVOKED = 0  # a token that was made and then revoked: a row, so its answer is cached
_UNKNOWN = -1  # a digest no row has: never cached (a flood of made-up tokens would fill the cache)


class ApiError(UserError):
    """An error the API answers with `{"error": message}` and the given status."""

    def __init__(self, message: str, status: int = 400, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after  # seconds, sent as Retry-After (a 429's)


def _load_token(key: tuple[int, str]) -> int:
    """The server a token digest belongs to when it is live; _REVOKED or _UNKNOWN otherwise."""
    row = ApiToken.objects.filter(digest=key[1]).values_list("server_id", "revoked_at").first()
    if row is None:
        return _UNKNOWN
    return row[0] if row[1] is None else _REVOKED


# Keyed by (the server the request names, digest), so that server's stamp covers the entry: a token
# created or revoked there bumps it. No stale copy: a token is never accepted on an old answer.
TOKENS: GenerationalCache[tuple[int, str], int, int] = GenerationalCache(
    name="apitoken",
    stamp="tokens",
    load=_load_token,
    server_of=lambda key: key[0],
    stale=False,
    valid=lambda plain: isinstance(plain, int),
    keep=lambda plain: plain != _UNKNOWN,
)


# What a token write bumps (servers.writes.server_write): every process asks the database again
# about any token used on that server.
TOKENS_STAMP = TOKENS.stamp


def server_id_for_token(token: str, *, server_id: int) -> int | None:
    """The server a live token belongs to (asked on behalf of `server_id`), or None when it is
    unknown or revoked."""
    found = TOKENS.get((server_id, token_digest(token)))
    return found if found > 0 else None


def _refusals_per_second() -> float:
    return float(getattr(settings, "API_REFUSALS_PER_MINUTE", 30)) / 60


def _refusals_burst() -> float:
    return float(getattr(settings, "API_REFUSALS_BURST", 60))


# Per address, per process: the requests refused for their token (missing, unknown, revoked, or
# another server's). An address past its bucket is answered 429 before its token is looked up, so a
# flood of made-up tokens costs neither a query nor a cache round trip (docs/bot.md#one-guild-one-server-one-token).
_REFUSALS = Buckets(rate=_refusals_per_second, burst=_refusals_burst)
# Digests this process has accepted lately: a bot that shares its address with a flood keeps being
# served (its token is still checked, so a revocation holds at once).
_ACCEPTED_KEPT = 1024
_accepted_lock = threading.Lock()
_accepted: OrderedDict[str, None] = OrderedDict()


def _accepted_lately(digest: str) -> bool:
    with _accepted_lock:
        return digest in _accepted


def _note_accepted(digest: str) -> None:
    with _accepted_lock:
        _accepted[digest] = None
        _accepted.move_to_end(digest)
        if len(_accepted) > _ACCEPTED_KEPT:
            _accepted.popitem(last=False)


def forget_refusals() -> None:
    """This process's refusal counts and accepted digests forgotten (tests)."""
    _REFUSALS.forget()
    with _accepted_lock:
        _accepted.clear()


@dataclass(frozen=True, slots=True)
class Bearer:
    """The request's bearer token as sent, before it is looked up."""

    token: str
    digest: str  # "" when the header is not 'Bearer <token>' (at most 200 characters)
    address: str
    now: float


def read_bearer(request: HttpRequest) -> Bearer:
    """The request's bearer token; ApiError 429, with no query and no cache read, for an address
    whose requests were refused too often (unless this process accepted its token lately)."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    well_formed = scheme.lower() == "bearer" and bool(token) and len(token) <= 200
    digest = token_digest(token) if well_formed else ""
    address, now = client_address(request), time.monotonic()
    if not (digest and _accepted_lately(digest)) and not _REFUSALS.take(address, now, spend=False):
        raise ApiError(
            "Too many requests with a missing, unknown or revoked API token came from this address; "
            f"wait {RETRY_AFTER_SECONDS} s and try again.",
            429,
            retry_after=RETRY_AFTER_SECONDS,
        )
    return Bearer(token, digest, address, now)


def check_bearer(bearer: Bearer, server_id: int) -> int:
    """Return the server id the request may act on, or raise ApiError (401 / 404), counting the
    refusal against the address."""
    try:
        if not bearer.digest:
            raise ApiError("Send an API token as 'Authorization: Bearer <token>'.", 401)
        token_server = server_id_for_token(bearer.token, server_id=server_id)
        if token_server is None:
            raise ApiError("This API token is not valid (unknown or revoked).", 401)
        if token_server != server_id:
            # Says nothing of the server asked for; only that this token is not its token.
            raise ApiError(
                "No such server for this token: each Discord guild is its own server with its own "
                "token (docs/bot.md, “One guild, one server, one token”).",
                404,
            )
    except ApiError:
        _REFUSALS.take(bearer.address, bearer.now)
        raise
    _note_accepted(bearer.digest)
    return server_id


def authenticate_api_request(request: HttpRequest, server_id: int) -> int:
    """Return the server id the request may act on, or raise ApiError (401 / 404, 429 for an
    address whose requests were refused too often)."""
    return check_bearer(read_bearer(request), server_id)


def refusal_json(exc: UserError | EngineError) -> JsonResponse:
    """The API's one place for either root: `{"error": sentence}` with the error's `status` (400
    unless it says otherwise; a name clash 409, saying how to import anyway) and its Retry-After."""
    message = f"{exc.message} {exc.api_hint}" if isinstance(exc, NameClash) else exc.message
    response = JsonResponse({"error": message}, status=getattr(exc, "status", 400))
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


ViewFunction = Callable[..., HttpResponse]
# The shared-cache keys a view reads besides its server's generations, named from the request before
# its token is checked (so without raising); None: none named this way, the token is looked up first.
SharedKeys = Callable[[HttpRequest, int], tuple[str, ...] | None]


def api_view(view: ViewFunction) -> ViewFunction:
    """Wrap a view `view(request, server_id, ...)`: token auth first, a refusal answered as JSON."""
    return _api_wrapper(view, None)


def api_view_read_together(shared_keys: SharedKeys) -> Callable[[ViewFunction], ViewFunction]:
    """`api_view` for a view that reads the shared cache in one trip (`read_together`): the token's
    entry is read in that trip too, with the keys `shared_keys(request, server_id)` names, instead
    of a trip of its own before it (docs/assembly.md#the-http-path-a-bot-pays). The token is checked
    before the view runs, as under `api_view`, and a refusal counts against the address the same way."""
    return lambda view: _api_wrapper(view, shared_keys)


def _api_wrapper(view: ViewFunction, shared_keys: SharedKeys | None) -> ViewFunction:
    @csrf_exempt
    @wraps(view)
    def wrapper(request: HttpRequest, server_id: int, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            bearer = read_bearer(request)  # a 429 before any read
            also = shared_keys(request, server_id) if shared_keys is not None and bearer.digest else None
            with (
                nullcontext()
                if also is None
                else read_together(server_id, (*also, TOKENS.entry_key((server_id, bearer.digest))))
            ):
                check_bearer(bearer, server_id)
                claim_share(server_id)  # every API call counts toward its server's share
                return view(request, server_id, *args, **kwargs)
        except REFUSALS as exc:
            return refusal_json(exc)
        except ServerBusy:
            return busy_json()

    return wrapper


def read_json_body(request: HttpRequest, *, max_bytes: int) -> Any:
    """The request body parsed as JSON, bounded in size before it is read; ApiError otherwise. The
    body is read once: a second call on the same request with the same bound answers the same
    (`SharedKeys` read it before the view)."""
    kept = request.__dict__.get("_json_body")
    if kept is None or kept[0] != max_bytes:
        try:
            kept = (max_bytes, _read_json_body(request, max_bytes=max_bytes), None)
        except ApiError as exc:
            kept = (max_bytes, None, exc)
        request.__dict__["_json_body"] = kept
    if kept[2] is not None:
        raise kept[2]
    return kept[1]


def _read_json_body(request: HttpRequest, *, max_bytes: int) -> Any:
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
    """The bot behind the request, as the audit log names it (`core.actors.token_agent_for`)."""
    token = request.headers.get("Authorization", "").partition(" ")[2].strip()
    return token_agent_for(token)
