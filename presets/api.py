"""The bot's preset API: list, the active preset (from the cache), and import.

Authentication (401 / 404) is `servers.api_auth.api_view`'s job; errors here are `{"error": sentence}`.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse

from servers.api_auth import api_view, refuse_unstorable_upload, token_agent
from servers.models import Server

from . import cache as preset_cache
from . import selectors, services
from .forms import read_preset_upload
from .reports import compiled_json, import_report, preset_listing


def _json(data: Any, status: int = 200) -> JsonResponse:
    return JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False})


@api_view
def presets_collection(request: HttpRequest, server_id: int) -> HttpResponse:
    if request.method == "GET":
        return _json({"presets": [preset_listing(p) for p in selectors.presets_for(server_id)]})
    if request.method == "POST":
        return _import(request, server_id)
    return _json({"error": "Use GET to list presets or POST to import one."}, status=405)


@api_view
def active_preset(request: HttpRequest, server_id: int) -> HttpResponse:
    if request.method != "GET":
        return _json({"error": "Use GET to read the active preset."}, status=405)
    compiled = preset_cache.get_active_preset(server_id)
    return _json({"preset": compiled_json(compiled) if compiled is not None else None})


def _import(request: HttpRequest, server_id: int) -> HttpResponse:
    upload = read_preset_upload(request, default_activate=True, allow_raw_body=True)
    refuse_unstorable_upload(upload.raw, what="The preset")
    server = Server.objects.get(pk=server_id)
    result = services.preset_import(
        server=server,
        raw=upload.raw,
        filename=upload.filename,
        name=upload.options.name or None,
        on_clash=upload.options.on_clash,
        activate=upload.options.activate,
        by=token_agent(request),
    )
    return _json(import_report(result), status=201)
