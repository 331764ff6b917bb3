"""The bot's lorebook API: list and import. Authentication (401 / 404) is `servers.api_auth.api_view`'s job."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from core.uploads import body_limit, declared_size
from servers.api_auth import ApiError, api_view, refuse_unstorable_upload, token_agent
from servers.models import Server

from . import selectors, services
from .reports import import_report, lorebook_listing
from .views import body_too_large, too_large_message

TRUE_WORDS = ("1", "true", "yes", "on")
OPTIONS = ("name", "replace", "keep_both", "activate")


def _json(data: Any, status: int = 200) -> JsonResponse:
    return JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False})


@body_limit(lambda: settings.LOREBOOK_MAX_BYTES)
@api_view
def lorebooks_collection(request: HttpRequest, server_id: int) -> HttpResponse:
    if request.method == "GET":
        return _json({"lorebooks": [lorebook_listing(b) for b in selectors.lorebooks_for(server_id)]})
    if request.method == "POST":
        return _import(request, server_id)
    return _json({"error": "Use GET to list lorebooks or POST to import one."}, status=405)


def _import(request: HttpRequest, server_id: int) -> HttpResponse:
    if body_too_large(request):
        raise ApiError(too_large_message(declared_size(request)), 413)
    raw, filename, options = _read_upload(request)
    refuse_unstorable_upload(raw, what="The lorebook")
    replace, keep_both = _flag(options, "replace"), _flag(options, "keep_both")
    if replace and keep_both:
        raise ApiError("Send either replace=true or keep_both=true, not both.")
    result = services.lorebook_import(
        server=Server.objects.get(pk=server_id),
        raw=raw,
        filename=filename,
        name=options.get("name") or None,
        on_clash="replace" if replace else "keep_both" if keep_both else "ask",
        activate=options.get("activate", "true").strip().lower() in TRUE_WORDS,
        by=token_agent(request),
    )
    return _json(import_report(result), status=201)


def _read_upload(request: HttpRequest) -> tuple[bytes, str, dict[str, str]]:
    options = {key: request.GET.get(key, "") for key in OPTIONS if key in request.GET}
    limit = settings.LOREBOOK_MAX_BYTES
    if request.content_type == "multipart/form-data":
        options.update({key: request.POST[key] for key in OPTIONS if key in request.POST})
        upload = request.FILES.get("file")
        if upload is None:
            raise ApiError("Send the lorebook as a multipart field named 'file' or as a JSON body.")
        if upload.size is not None and upload.size > limit:
            raise ApiError(too_large_message(upload.size), 413)
        return upload.read(limit + 1), upload.name or "lorebook.json", options
    raw = request.read(limit + 1)
    if len(raw) > limit:  # the body is the file: its declared length is its size
        raise ApiError(too_large_message(declared_size(request)), 413)
    if not raw:
        raise ApiError(
            "The request body is empty: send the lorebook's JSON, or a multipart field named 'file'."
        )
    name = options.get("name", "").strip()
    return raw, f"{name or 'lorebook'}.json", options


def _flag(options: dict[str, str], key: str) -> bool:
    return options.get(key, "").strip().lower() in TRUE_WORDS
