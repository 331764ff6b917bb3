"""The preview page: pick a preset, a sample bucket document, the style, the provider and the seed,
and see the exact messages with their sources, omissions, variables, warnings and token budget.

Rendering a preview never writes; saving a sample needs Action.EDIT_SAMPLES.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from conversations.selectors import conversation_choices, preview_inputs
from engine import PROVIDERS, STYLES, BucketError
from presets.selectors import presets_for
from servers.models import Server
from servers.permissions import Action, get_server_for, user_can
from servers.users import AuthenticatedHttpRequest

from . import selectors, services
from .preview import Preview, PreviewOptions, parse_document_text, preview_assembly

PAGE = "assembly/preview.html"


@login_required
@require_GET
def preview_page(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.VIEW_PREVIEW)
    sample_name = request.GET.get("sample", "")
    bucket = selectors.sample_bucket_named(server.pk, sample_name) if sample_name else None
    if bucket is None and not sample_name:
        buckets = selectors.sample_buckets_for(server.pk)
        bucket = buckets[0] if buckets else None
    document = bucket.document if bucket is not None else selectors.default_document()
    options = _options(request.GET)
    text = json.dumps(document, ensure_ascii=False, indent=2)
    preview = _preview(server, document, options)
    name = bucket.name if bucket is not None else selectors.DEFAULT_SAMPLE_NAME
    return render(request, PAGE, _context(request, server, options, text, preview, sample_name=name))


@login_required
@require_POST
@vary_on_headers("HX-Request")
def preview_render(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.VIEW_PREVIEW)
    options = _options(request.POST)
    text = request.POST.get("document", "")
    document, error = parse_document_text(text)
    preview = Preview(error=error) if error else _preview(server, document, options)
    context = _context(request, server, options, text, preview, sample_name=request.POST.get("name", ""))
    status = 400 if preview.error else 200
    if getattr(request, "htmx", False):
        return render(request, f"{PAGE}#result", context, status=status)
    return render(request, PAGE, context, status=status)


@login_required
@require_POST
@vary_on_headers("HX-Request")
def sample_save(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.EDIT_SAMPLES)
    options = _options(request.POST)
    text = request.POST.get("document", "")
    name = request.POST.get("name", "")
    document, error = parse_document_text(text)
    if not error:
        try:
            bucket = services.sample_bucket_save(server=server, name=name, document=document, by=request.user)
        except BucketError as exc:
            error = exc.message
        else:
            return redirect(_page_url(server, bucket.name, options))
    context = _context(request, server, options, text, Preview(error=error), sample_name=name)
    context["save_error"] = error
    return render(request, PAGE, context, status=400)


@login_required
@require_POST
def sample_delete(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.EDIT_SAMPLES)
    bucket = selectors.sample_bucket_named(server.pk, request.POST.get("name", ""))
    if bucket is not None:
        services.sample_bucket_delete(bucket=bucket, by=request.user)
    return redirect("assembly:preview", server_id=server.pk)


def _preview(server: Server, document: Any, options: PreviewOptions) -> Preview:
    """The preview, with a chosen sample conversation's history and variables replacing the sample's."""
    if options.conversation is None:
        return preview_assembly(server_id=server.pk, document=document, options=options)
    inputs = preview_inputs(server.pk, options.conversation)
    if inputs is None:
        return Preview(error="This server has no such sample conversation.")
    history, variables = inputs
    return preview_assembly(
        server_id=server.pk, document=document, options=options, history=history, variables=variables
    )


def _conversation_choices(server: Server) -> list[tuple[int, str]]:
    return conversation_choices(server.pk)


def _options(data: Any) -> PreviewOptions:
    preset = data.get("preset", "active")
    style = data.get("style", "")
    provider = data.get("provider", "")
    seed_text = (data.get("seed") or "").strip()
    conversation = (data.get("conversation") or "").strip()
    return PreviewOptions(
        conversation=int(conversation) if conversation.isdigit() and len(conversation) < 19 else None,
        preset=preset if preset in ("active", "native") or preset.isdigit() else "active",
        style=style if style in STYLES else "",
        provider=provider if provider in PROVIDERS else "",
        seed=int(seed_text) if seed_text.isdigit() and len(seed_text) < 19 else None,
    )


def _page_url(server: Server, sample: str, options: PreviewOptions) -> str:
    query = {"sample": sample, "preset": options.preset, "style": options.style, "provider": options.provider}
    if options.conversation is not None:
        query["conversation"] = str(options.conversation)
    if options.seed is not None:
        query["seed"] = str(options.seed)
    return reverse("assembly:preview", args=[server.pk]) + "?" + urlencode(query)


def _context(
    request: HttpRequest,
    server: Server,
    options: PreviewOptions,
    text: str,
    preview: Preview,
    *,
    sample_name: str,
) -> dict[str, Any]:
    return {
        "server": server,
        "options": options,
        "document_text": text,
        "preview": preview,
        "sample_name": sample_name,
        "buckets": selectors.sample_buckets_for(server.pk),
        "presets": presets_for(server),
        "styles": STYLES,
        "providers": PROVIDERS,
        "conversations": _conversation_choices(server),
        "can_edit": user_can(request.user, server, Action.EDIT_SAMPLES),
    }
