"""The bot's cleaning API: `POST /api/v1/servers/<id>/regex/clean` (docs/regex.md#where-they-run).

Body: `{"text": str, "kind": "reply" | "user_message" (default "reply"), "reasoning": str?,
"impersonate": bool?, "preset": name?, "seed": int?, "names": {"user", "char"}?}`. The answer is
what `manage.py regex apply` prints: `{"stored", "display", "reasoning", "applied", "errors"}`.
Authentication (401 / 404) is `servers.api_auth.api_view`'s; errors are `{"error": sentence}`.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST

from core.fairness import fair_share
from servers.api_auth import ApiError, api_view, json_response, read_json_body, refuse_unknown_fields

from .selectors import clean_for_server

MAX_BODY_BYTES = 1024 * 1024
FIELDS = frozenset(("text", "kind", "reasoning", "impersonate", "preset", "seed", "names"))


@require_POST
@api_view
@fair_share
def clean_view(request: HttpRequest, server_id: int) -> HttpResponse:
    body = read_json_body(request, max_bytes=MAX_BODY_BYTES)
    if not isinstance(body, dict):
        raise ApiError("The request body must be a JSON object with a `text`.")
    refuse_unknown_fields(body, FIELDS)
    text = body.get("text")
    if not isinstance(text, str):
        raise ApiError("`text` must be a string (the reply or the user message).")
    kind = body.get("kind", "reply")
    if kind not in ("reply", "user_message"):
        raise ApiError("`kind` must be reply or user_message.")
    names = body.get("names") or {}
    options = _checked(body, names)
    cleaned = clean_for_server(server_id=server_id, text=text, user_message=kind == "user_message", **options)
    return json_response(cleaned.to_dict())


def _checked(body: dict[str, Any], names: Any) -> dict[str, Any]:
    if not isinstance(names, dict) or any(not isinstance(names.get(k, ""), str) for k in ("user", "char")):
        raise ApiError("`names` must be an object with string `user` and `char`.")
    for key in ("reasoning", "preset"):
        if body.get(key) is not None and not isinstance(body[key], str):
            raise ApiError(f"`{key}` must be a string.")
    if not isinstance(body.get("impersonate", False), bool):
        raise ApiError("`impersonate` must be true or false.")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ApiError("`seed` must be a non-negative whole number.")
    return {
        "reasoning": body.get("reasoning"),
        "preset_name": body.get("preset"),
        "impersonate": body.get("impersonate", False),
        "seed": seed,
        "user": names.get("user") or "User",
        "char": names.get("char") or "Assistant",
    }
