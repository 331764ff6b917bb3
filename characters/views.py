"""Character card pages (docs/cards.md): every role reads, admins import, switch and delete.

The avatar and the downloads are served by views with their own content type: card text is never
put into a page unescaped, and the PNG never inline.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from core.errors import REFUSALS
from core.fairness import light_share
from core.refusals import refusal_status
from core.uploads import body_limit, too_large
from engine.cards import MAX_CARD_BYTES, TEXT_FIELDS, card_png
from servers.confirm import Confirmation, ask_first
from servers.imports import on_clash_from
from servers.models import Server
from servers.permissions import Action, get_server_for, user_can
from servers.users import AuthenticatedHttpRequest

from . import selectors, services
from .models import Card as CardRow

# Which prompt block each field feeds (docs/cards.md), as the card page explains it.
FEEDS = {
    "name": "{{char}}, and the sample's character name when the bot sends none",
    "description": "the persona prompt (charDescription) when the bot sends none",
    "personality": "the personality block (charPersonality) when the bot sends none",
    "scenario": "the scenario marker, through the preset's scenario_format",
    "mes_example": "the sample dialogues (dialogueExamples), split on <START>, when the bot sends none",
    "system_prompt": "replaces the preset's main prompt text ({{original}} = the preset's text)",
    "post_history_instructions": "replaces the preset's jailbreak / post-history text",
    "first_mes": "shown here only: the bot writes its own first message",
    "creator_notes": "shown here only (World Info entries may scan it)",
}


@login_required
@vary_on_headers("HX-Request")
@require_GET
def card_list(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_CARDS)
    return _list(request, server)


@body_limit(MAX_CARD_BYTES)
@login_required
@vary_on_headers("HX-Request")
@require_POST
def card_upload(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_CARDS)
    upload = request.FILES.get("file")
    if upload is None:
        return _list(request, server, error="Choose a character card (.json or .png) to upload.", status=400)
    if upload.size is not None and upload.size > MAX_CARD_BYTES:
        return _list(
            request,
            server,
            error=too_large(upload.size, limit=MAX_CARD_BYTES, what="character card"),
            status=413,
        )
    try:
        result = services.card_import(
            server=server,
            raw=upload.read(MAX_CARD_BYTES + 1),
            filename=upload.name or "card",
            name=request.POST.get("name") or None,
            on_clash=on_clash_from(request.POST.get("on_clash")),
            activate=request.POST.get("activate") in ("1", "on", "true"),
            by=request.user,
        )
    except services.CardNameClash as exc:  # a conflict: the page asks whether to replace or keep both
        return _list(request, server, error=exc.message + " Choose replace or keep both.", status=409)
    except REFUSALS as exc:
        return _list(request, server, error=exc.message, status=refusal_status(exc))
    for warning in result.read.warnings:
        messages.warning(request, warning)
    messages.success(request, f"Imported {result.row.name}.")
    return redirect("characters:detail", server_id=server.pk, card_id=result.row.pk)


@login_required
@require_GET
def card_detail(request: AuthenticatedHttpRequest, server_id: int, card_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_CARDS)
    row = _card_or_404(server, card_id)
    card = selectors.card_data(row)
    fields = [
        {"name": name, "value": getattr(card, name), "feeds": FEEDS.get(name, "")}
        for name in TEXT_FIELDS
        if str(getattr(card, name)).strip()
    ]
    context: dict[str, Any] = {
        "server": server,
        "row": row,
        "card": card,
        "fields": fields,
        "book_entries": len((card.character_book or {}).get("entries") or []),
        "can_manage": user_can(request.user, server, Action.MANAGE_CARDS),
        "uses": selectors.card_uses(server.pk, row.pk),
    }
    return render(request, "characters/detail.html", context)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def card_activate(request: AuthenticatedHttpRequest, server_id: int, card_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_CARDS)
    row = _card_or_404(server, card_id)
    services.card_activate(card=row, by=request.user)
    return _after_action(request, server, row=row)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def card_deactivate(request: AuthenticatedHttpRequest, server_id: int, card_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_CARDS)
    row = _card_or_404(server, card_id)
    services.card_deactivate(card=row, by=request.user)
    return _after_action(request, server, row=row)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def card_delete(request: AuthenticatedHttpRequest, server_id: int, card_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_CARDS)
    card = _card_or_404(server, card_id)
    uses = selectors.card_uses(server.pk, card.pk)
    affects = [f"It leaves {' and '.join(uses)}; the other members keep their order."] if uses else []
    if card.is_active:
        affects.append("It is the server's active card: the bot answers without a character.")
    asked = ask_first(
        request,
        Confirmation(
            question=f"Delete the card “{card.name}”?",
            button="Delete the card",
            back=reverse("characters:detail", args=[server.pk, card.pk]),
            affects=[*affects, "No version keeps a card: download it first to keep a copy."],
        ),
    )
    if asked:
        return asked
    services.card_delete(card=card, by=request.user)
    left = f" It left {' and '.join(uses)}." if uses else ""
    messages.success(request, f"Deleted the card “{card.name}”.{left}")
    return _after_action(request, server)


@login_required
@require_GET
def card_download(request: AuthenticatedHttpRequest, server_id: int, card_id: int, kind: str) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_CARDS)
    if kind not in ("json", "png"):
        raise Http404("Cards download as .json or .png.")
    row = _card_or_404(server, card_id)
    card = selectors.card_data(row)
    if kind == "png":
        body = card_png(card, book=card.character_book, avatar=bytes(row.avatar) if row.avatar else None)
        response = HttpResponse(body, content_type="image/png")
    else:
        body = json.dumps(card.to_v3(book=card.character_book), ensure_ascii=False, indent=2).encode()
        response = HttpResponse(body, content_type="application/json; charset=utf-8")
    # Django's own fallback when the name cannot be written (never None for an attachment)
    response["Content-Disposition"] = content_disposition_header(True, f"{row.name}.{kind}") or "attachment"
    return response


@light_share  # a page shows many of these at once: none takes one of the server's places
@login_required
@require_GET
def card_avatar(request: AuthenticatedHttpRequest, server_id: int, card_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_CARDS)
    row = _card_or_404(server, card_id)
    if not row.avatar:
        raise Http404("This card came without an image.")
    response = HttpResponse(bytes(row.avatar), content_type="image/png")
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _card_or_404(server: Server, card_id: int) -> CardRow:
    row = selectors.card_of(server, card_id)
    if row is None:
        raise Http404("No such card on this server.")
    return row


def _list(
    request: AuthenticatedHttpRequest, server: Server, *, error: str | None = None, status: int = 200
) -> HttpResponse:
    context = {
        "server": server,
        "cards": selectors.cards_for(server),
        "can_manage": user_can(request.user, server, Action.MANAGE_CARDS),
        "error": error,
    }
    if request.htmx and error is None:
        return render(request, "characters/list.html#card-table", context)
    return render(request, "characters/list.html", context, status=status)


def _after_action(
    request: AuthenticatedHttpRequest, server: Server, *, row: CardRow | None = None
) -> HttpResponse:
    """Back to the card's own page when its buttons were pressed there, else the list (or its table)."""
    if row is not None and request.POST.get("next") == "detail":
        return redirect("characters:detail", server_id=server.pk, card_id=row.pk)
    if request.htmx and request.POST.get("next") == "list":  # deleted from its own page: go to the list
        return HttpResponseClientRedirect(reverse("characters:list", args=[server.pk]))
    if request.htmx:
        return _list(request, server)
    return redirect("characters:list", server_id=server.pk)
