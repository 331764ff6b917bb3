"""The bot's preset API: list, the active preset (from the cache), and import.

Authentication (401 / 404) is `servers.api_auth.api_view`'s job; errors here are `{"error": sentence}`.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from servers.api_auth import ApiError, api_view
from servers.models import Server

from . import cache as preset_cache
from . import selectors, services
from .compiled import CompiledPreset
from .models import Preset
from .st_format import ImportRefused
from .views import body_too_large, too_large_message

TRUE_WORDS = ("1", "true", "yes", "on")


def _json(data: Any, status: int = 200) -> JsonResponse:
    return JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False})


def import_report(result: services.ImportResult) -> dict[str, Any]:
    """What an import did, as one JSON object (the API's and the CLI's answer).

    The summary's fields (SPEC §1.6) sit at the top level next to `preset_id`, `name`, `active`,
    `replaced` and `carried_over`.
    """
    return {
        "preset_id": result.preset.pk,
        "name": result.preset.name,
        "active": result.preset.is_active,
        "replaced": result.replaced,
        "carried_over": result.carried_over,
        **result.summary.to_dict(),
    }


def preset_listing(preset: Preset) -> dict[str, Any]:
    """One row of a preset list."""
    return {
        "preset_id": preset.pk,
        "name": preset.name,
        "active": preset.is_active,
        "shape": preset.shape,
        "nodes": preset.node_count,
        "injection_style": preset.injection_style,
        "updated_at": preset.updated_at.isoformat(),
    }


def compiled_json(compiled: CompiledPreset) -> dict[str, Any]:
    """The compiled preset as JSON: settings and every node in prompt order."""
    return {
        "preset_id": compiled.preset_id,
        "name": compiled.name,
        "injection_style": compiled.injection_style,
        "settings": compiled.settings.to_dict(),
        "nodes": [compiled_node.node.to_dict() for compiled_node in compiled.nodes],
    }


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
    if body_too_large(request):
        raise ApiError(too_large_message(), 413)
    raw, filename, options = _read_upload(request)
    replace, keep_both = _flag(options, "replace"), _flag(options, "keep_both")
    if replace and keep_both:
        raise ApiError("Send either replace=true or keep_both=true, not both.")
    activate = options.get("activate", "true").strip().lower() in TRUE_WORDS
    server = Server.objects.get(pk=server_id)
    try:
        result = services.preset_import(
            server=server,
            raw=raw,
            filename=filename,
            name=options.get("name") or None,
            on_clash="replace" if replace else "keep_both" if keep_both else "ask",
            activate=activate,
            by=None,
            actor_label=actor_label(request),
        )
    except ImportRefused as exc:
        raise ApiError(exc.message, exc.status) from None
    except services.PresetNameClash as exc:
        raise ApiError(
            exc.message + " Send replace=true to replace it or keep_both=true to keep both.", 409
        ) from None
    return _json(import_report(result), status=201)


def _read_upload(request: HttpRequest) -> tuple[bytes, str, dict[str, str]]:
    """The uploaded bytes, a file name for them, and the options (query string, then form fields)."""
    options = {
        key: request.GET.get(key, "")
        for key in ("name", "replace", "keep_both", "activate")
        if key in request.GET
    }
    if request.content_type == "multipart/form-data":
        for key in ("name", "replace", "keep_both", "activate"):
            if key in request.POST:
                options[key] = request.POST[key]
        upload = request.FILES.get("file")
        if upload is None:
            raise ApiError("Send the preset as a multipart field named 'file' or as a JSON body.")
        if upload.size is not None and upload.size > settings.PRESET_MAX_BYTES:
            raise ApiError(too_large_message(), 413)
        return upload.read(settings.PRESET_MAX_BYTES + 1), upload.name or "preset.json", options
    raw = request.read(settings.PRESET_MAX_BYTES + 1)
    if not raw:
        raise ApiError(
            "The request body is empty: send the preset's JSON, or a multipart field named 'file'."
        )
    name = options.get("name", "").strip()
    return raw, f"{name or 'preset'}.json", options


def _flag(options: dict[str, str], key: str) -> bool:
    return options.get(key, "").strip().lower() in TRUE_WORDS


def actor_label(request: HttpRequest) -> str:
    """'api token <prefix>' for the audit trail (the prefix is stored with the token, never the rest)."""
    token = request.headers.get("Authorization", "").partition(" ")[2].strip()
    return f"api token {token[:10]}"
