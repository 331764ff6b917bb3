"""The preview page: pick a preset, a sample bucket document, the style, the provider and the seed,
and see the exact messages with their sources, omissions, variables, warnings and token budget.

Rendering a preview never writes; saving a sample needs Action.EDIT_SAMPLES.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from conversations.channels.selectors import stored_channel_ids
from conversations.selectors import conversation_choices
from core.errors import REFUSALS
from engine import GENERATION_TYPES, PROVIDERS, STYLES
from presets.selectors import presets_for
from servers.confirm import Confirmation, ask_first
from servers.generational_cache import read_together
from servers.models import Server
from servers.permissions import Action, get_server_for, user_can
from servers.selectors import directory_names
from servers.snowflakes import snowflake_or_none
from servers.users import AuthenticatedHttpRequest

from . import selectors, services
from .preview import PreviewOptions, parse_document_text
from .preview_result import PreviewResult, offloaded_preview_result
from .sample_form import apply_row_op, document_from_form, form_from_document

PAGE = "assembly/preview.html"


@login_required
@require_GET
def preview_page(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.VIEW_PREVIEW)
    with read_together(server.pk):  # the page reads and writes nothing: one trip for the caches
        return _preview_page(request, server)


def _preview_page(request: AuthenticatedHttpRequest, server: Server) -> HttpResponse:
    sample_name = request.GET.get("sample", "")
    bucket = selectors.sample_bucket_named(server.pk, sample_name) if sample_name else None
    if bucket is None and not sample_name:
        buckets = selectors.sample_buckets_for(server.pk)
        bucket = buckets[0] if buckets else None
    document = bucket.document if bucket is not None else selectors.default_document()
    options = _options(request.GET)
    result = offloaded_preview_result(server=server, document=document, options=options)
    name = bucket.name if bucket is not None else selectors.DEFAULT_SAMPLE_NAME
    context = _context(request, server, options, document, result, sample_name=name)
    return render(request, PAGE, context, status=503 if result.stopped else 200)


@login_required
@require_POST
@vary_on_headers("HX-Request")
def preview_render(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.VIEW_PREVIEW)
    with read_together(server.pk):  # rendering writes nothing: one trip for the caches it reads
        return _preview_render(request, server)


def _preview_render(request: AuthenticatedHttpRequest, server: Server) -> HttpResponse:
    options = _options(request.POST)
    posted = _posted_document(request.POST)
    result = offloaded_preview_result(
        server=server, document=posted.document, options=options, error=posted.error
    )
    name = request.POST.get("name", "")
    context = _context(request, server, options, posted.document, result, sample_name=name, posted=posted)
    if getattr(request, "htmx", False):  # htmx swaps only 2xx answers: the error is in the partial
        return _partial_answer(request, context, posted)
    status = 503 if result.stopped else 400 if result.error else 200
    return render(request, PAGE, context, status=status)


@login_required
@require_POST
@vary_on_headers("HX-Request")
def sample_save(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.EDIT_SAMPLES)
    options = _options(request.POST)
    name = request.POST.get("name", "")
    posted = _posted_document(request.POST)
    error = posted.error
    if not error:
        try:
            bucket = services.sample_bucket_save(
                server=server, name=name, document=posted.document, by=request.user
            )
        except REFUSALS as exc:
            error = exc.message
        else:
            return redirect(_page_url(server, bucket.name, options))
    shown = offloaded_preview_result(server=server, document=None, options=options, error=error)
    context = _context(request, server, options, posted.document, shown, sample_name=name, posted=posted)
    context["save_error"] = error
    return render(request, PAGE, context, status=400)


@login_required
@require_POST
def sample_delete(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.EDIT_SAMPLES)
    bucket = selectors.sample_bucket_named(server.pk, request.POST.get("name", ""))
    if bucket is not None:
        asked = ask_first(
            request,
            Confirmation(
                question=f"Delete the saved sample “{bucket.name}”?",
                button="Delete the sample",
                back=reverse("assembly:preview", args=[server.pk]),
                affects=["The preview no longer offers it; no version keeps a sample."],
            ),
        )
        if asked:
            return asked
        services.sample_bucket_delete(bucket=bucket, by=request.user)
    return redirect("assembly:preview", server_id=server.pk)


def _conversation_choices(server: Server) -> list[tuple[int, str]]:
    return conversation_choices(server.pk)


def _channel_choices(server: Server) -> list[tuple[int, str]]:
    """The server's stored channels for the "as it stands now" select, by name where the bot pushed one."""
    names = directory_names(server.pk)
    return [
        (channel_id, f"#{names.channel(channel_id)}" if names.channel(channel_id) else str(channel_id))
        for channel_id in stored_channel_ids(server.pk)
    ]


def _options(data: Any) -> PreviewOptions:
    preset = data.get("preset", "active")
    style = data.get("style", "")
    provider = data.get("provider", "")
    generation_type = data.get("generation_type", "")
    seed_text = (data.get("seed") or "").strip()
    conversation = (data.get("conversation") or "").strip()
    message = (data.get("message") or "").strip()
    group, speaker = (
        str(data.get("group") or "").strip()[:200],
        str(data.get("speaker") or "").strip()[:200],
    )
    channel = snowflake_or_none((data.get("channel") or "").strip())
    return PreviewOptions(
        channel=channel,
        conversation=int(conversation) if conversation.isdigit() and len(conversation) < 19 else None,
        message=int(message) if message.isdigit() and 0 < len(message) < 10 and int(message) > 0 else None,
        preset=preset if preset in ("active", "native") or preset.isdigit() else "active",
        style=style if style in STYLES else "",
        provider=provider if provider in PROVIDERS else "",
        generation_type=generation_type if generation_type in GENERATION_TYPES else "",
        seed=int(seed_text) if seed_text.isdigit() and len(seed_text) < 19 else None,
        group=group if speaker else "",
        speaker=speaker if group else "",
    )


def _page_url(server: Server, sample: str, options: PreviewOptions) -> str:
    query = {"sample": sample, "preset": options.preset, "style": options.style, "provider": options.provider}
    if options.generation_type:
        query["generation_type"] = options.generation_type
    if options.channel is not None:
        query["channel"] = str(options.channel)
    if options.conversation is not None:
        query["conversation"] = str(options.conversation)
        if options.message is not None:
            query["message"] = str(options.message)
    if options.seed is not None:
        query["seed"] = str(options.seed)
    if options.group:
        query["group"], query["speaker"] = options.group, options.speaker
    return reverse("assembly:preview", args=[server.pk]) + "?" + urlencode(query)


@dataclass(frozen=True, slots=True)
class PostedDocument:
    """The document a POST describes: the form's fields laid over the JSON view, or the JSON view
    alone (`source=json`), after a row button; `text` is the JSON to show when it did not decode."""

    document: Any
    error: str = ""
    text: str = ""
    from_json: bool = False
    row_op: bool = False


def _posted_document(data: Any) -> PostedDocument:
    text = data.get("document", "")
    base, error = parse_document_text(text)
    from_json = data.get("source") == "json"
    op = data.get("op", "")
    if error:
        return PostedDocument(document=None, error=error, text=text, from_json=from_json)
    document = base
    if not from_json:
        try:
            document = document_from_form(data, base)
        except REFUSALS as exc:
            return PostedDocument(document=base, error=exc.message, text=text)
    if op and isinstance(document, dict):
        document = apply_row_op(document, op)
    return PostedDocument(document=document, from_json=from_json, row_op=bool(op))


def _partial_answer(
    request: AuthenticatedHttpRequest, context: dict[str, Any], posted: PostedDocument
) -> HttpResponse:
    """The result, plus the other view of the sample swapped out of band: the JSON after a form
    change, the fields after a JSON change or a row button (never the box being typed in)."""
    response = HttpResponse(context["result"].html)
    oob = {**context, "oob": True}
    extra = ""
    if posted.document is not None and (posted.from_json or posted.row_op):
        extra += render_to_string(f"{PAGE}#sample-fields", oob, request=request)
    if posted.document is not None and not posted.from_json:
        extra += render_to_string(f"{PAGE}#document-json", oob, request=request)
    response.content += extra.encode()
    return response


def _context(
    request: AuthenticatedHttpRequest,
    server: Server,
    options: PreviewOptions,
    document: Any,
    result: PreviewResult,
    *,
    sample_name: str,
    posted: PostedDocument | None = None,
) -> dict[str, Any]:
    if document is None:  # the JSON did not decode: show it as typed, the fields as they were sent
        text = posted.text if posted else ""
        sections = form_from_document(_fields_only(request.POST))
    else:
        text = json.dumps(document, ensure_ascii=False, indent=2)
        sections = form_from_document(document)
    return {
        "server": server,
        "options": options,
        "document_text": text,
        "sections": sections,
        "result": result,
        "sample_name": sample_name,
        # Read only when the template shows them: the whole page does, htmx's partial answer does not.
        "buckets": SimpleLazyObject(lambda: selectors.sample_buckets_for(server.pk)),
        "presets": SimpleLazyObject(lambda: presets_for(server)),
        "styles": STYLES,
        "providers": PROVIDERS,
        "generation_types": GENERATION_TYPES,
        "conversations": SimpleLazyObject(lambda: _conversation_choices(server)),
        "channels": SimpleLazyObject(lambda: _channel_choices(server)),
        "can_edit": user_can(request.user, server, Action.EDIT_SAMPLES),
    }


def _fields_only(data: Any) -> Any:
    try:
        return document_from_form(data, None)
    except REFUSALS:
        return None
