"""Lorebook pages: list with World Info settings, upload with its summary, one lorebook's entries.

Every page asks `get_server_for` first (404 for non-members, 403 for a role without the action):
admins write, moderators and support read (docs/presets.md#who-may-do-what, the presets' actions). Writes are
POST forms that redirect without JavaScript and answer with a partial under htmx.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from core.errors import REFUSALS
from core.refusals import refusal_status, show_refusal
from core.uploads import body_limit, declared_size, too_large, upload_body_bytes
from engine.worldinfo import STRATEGIES, LorebookSummary, export_world_info
from servers.confirm import Confirmation, ask_first
from servers.imports import on_clash_from
from servers.models import Server
from servers.permissions import Action, get_server_for, user_can
from servers.users import AuthenticatedHttpRequest

from . import selectors, services
from .models import Lorebook, LorebookEntry

ENTRIES_PER_PAGE = 200
SETTING_FORM = (
    ("scan_depth", "Scan depth (messages)", "number"),
    ("budget_percent", "Budget (% of the context)", "number"),
    ("budget_cap", "Budget cap (tokens, 0 = none)", "number"),
    ("context_size", "Context size (tokens, when the request gives no budget)", "number"),
    ("recursive", "Recursive scanning", "bool"),
    ("max_recursion", "Max recursion steps (0 = unlimited)", "number"),
    ("min_activations", "Min activations", "number"),
    ("min_activations_depth_max", "Min activations: max depth (0 = chat length)", "number"),
    ("case_sensitive", "Case-sensitive keys", "bool"),
    ("match_whole_words", "Match whole words", "bool"),
    ("group_scoring", "Group scoring", "bool"),
    ("include_names", "Include names", "bool"),
)


def too_large_message(size: int | None = None) -> str:
    return too_large(size, limit=settings.LOREBOOK_MAX_BYTES, what="lorebook")


def body_too_large(request: HttpRequest) -> bool:
    """True when the declared body is larger than any acceptable upload (checked before reading it)."""
    declared = declared_size(request)
    return declared is not None and declared > upload_body_bytes(settings.LOREBOOK_MAX_BYTES)


@login_required
@vary_on_headers("HX-Request")
@require_GET
def lorebook_list(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_LOREBOOKS)
    context = _list_context(request, server)
    if request.htmx:
        return render(request, "lorebooks/list.html#lorebook-table", context)
    return render(request, "lorebooks/list.html", context)


@body_limit(lambda: settings.LOREBOOK_MAX_BYTES)
@login_required
@vary_on_headers("HX-Request")
@require_http_methods(["GET", "POST"])
def lorebook_upload(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_LOREBOOKS)
    form = {"name": "", "activate": True, "on_clash": "ask"}
    if request.method == "GET":
        return render(request, "lorebooks/upload.html", _upload_context(server, form))
    error, status, clash = None, 200, False
    if body_too_large(request):
        error, status = too_large_message(), 413
    else:
        name = request.POST.get("name", "").strip()
        activate = request.POST.get("activate") in ("1", "on", "true")
        on_clash = on_clash_from(request.POST.get("on_clash"))
        form = {"name": name, "activate": activate, "on_clash": on_clash}
        upload = request.FILES.get("file")
        if upload is None:
            error, status = "Choose a SillyTavern World Info file (.json) to upload.", 400
        elif upload.size is not None and upload.size > settings.LOREBOOK_MAX_BYTES:
            error, status = too_large_message(upload.size), 413
        else:
            try:
                result = services.lorebook_import(
                    server=server,
                    raw=upload.read(settings.LOREBOOK_MAX_BYTES + 1),
                    filename=upload.name or "lorebook.json",
                    name=name or None,
                    on_clash=on_clash,
                    activate=activate,
                    by=request.user,
                )
            except services.LorebookNameClash as exc:  # a conflict: the page asks what to do
                error, status, clash = exc.message + " Choose whether to replace it or keep both.", 409, True
            except REFUSALS as exc:
                error, status = exc.message, refusal_status(exc)
            else:
                url = reverse("lorebooks:detail", args=[server.id, result.lorebook.pk]) + "?imported=1"
                if request.htmx:
                    return HttpResponse(status=204, headers={"HX-Redirect": url})
                return redirect(url)
    context = _upload_context(server, form, error=error, clash=clash)
    if request.htmx:
        return render(request, "lorebooks/upload.html#upload-result", context)
    return render(request, "lorebooks/upload.html", context, status=status)


@login_required
@vary_on_headers("HX-Request")
@require_GET
def lorebook_detail(request: AuthenticatedHttpRequest, server_id: int, lorebook_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_LOREBOOKS)
    lorebook = _lorebook_or_404(server, lorebook_id)
    context = _detail_context(request, server, lorebook, _filters(request.GET))
    if request.htmx and request.GET.get("partial") == "entries":
        return render(request, "lorebooks/detail.html#entry-list", context)
    return render(request, "lorebooks/detail.html", context)


def _set_active(
    request: AuthenticatedHttpRequest, server_id: int, lorebook_id: int, active: bool
) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_LOREBOOKS)
    lorebook = _lorebook_or_404(server, lorebook_id)
    services.lorebook_set_active(lorebook=lorebook, active=active, by=request.user)
    if request.htmx:
        return render(request, "lorebooks/list.html#lorebook-table", _list_context(request, server))
    messages.success(request, f"“{lorebook.name}” is now {'active' if active else 'inactive'}.")
    if request.POST.get("next") == "detail":
        return redirect("lorebooks:detail", server_id=server.id, lorebook_id=lorebook.pk)
    return redirect("lorebooks:list", server_id=server.id)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def lorebook_activate(request: AuthenticatedHttpRequest, server_id: int, lorebook_id: int) -> HttpResponse:
    return _set_active(request, server_id, lorebook_id, True)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def lorebook_deactivate(request: AuthenticatedHttpRequest, server_id: int, lorebook_id: int) -> HttpResponse:
    return _set_active(request, server_id, lorebook_id, False)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def lorebook_delete(request: AuthenticatedHttpRequest, server_id: int, lorebook_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_LOREBOOKS)
    lorebook = _lorebook_or_404(server, lorebook_id)
    asked = ask_first(
        request,
        Confirmation(
            question=f"Delete the lorebook “{lorebook.name}”?",
            button="Delete the lorebook",
            back=reverse("lorebooks:detail", args=[server.id, lorebook.pk]),
            affects=[
                "Its entries go with it, and no version keeps them: download it first to keep a copy."
                + (" It is active: the bot stops using its entries at once." if lorebook.is_active else "")
            ],
        ),
    )
    if asked:
        return asked
    services.lorebook_delete(lorebook=lorebook, by=request.user)
    if request.htmx:
        return render(request, "lorebooks/list.html#lorebook-table", _list_context(request, server))
    messages.success(request, f"Deleted “{lorebook.name}”.")
    return redirect("lorebooks:list", server_id=server.id)


@login_required
@require_GET
def lorebook_download(request: AuthenticatedHttpRequest, server_id: int, lorebook_id: int) -> HttpResponse:
    """The upload as it came (`?as=original`, the default) or a SillyTavern World Info export (`?as=export`)."""
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_LOREBOOKS)
    lorebook = server.lorebooks.filter(pk=lorebook_id).first()
    if lorebook is None:
        raise Http404("No such lorebook.")
    if request.GET.get("as") == "export":
        body = export_world_info(selectors.engine_entries(lorebook.pk))
        filename = f"{lorebook.name} (World Info).json"
    else:
        body, filename = lorebook.original_text, f"{lorebook.name}.json"
    return HttpResponse(
        body.encode("utf-8"),
        content_type="application/json; charset=utf-8",
        headers={"Content-Disposition": content_disposition_header(True, filename)},
    )


@login_required
@vary_on_headers("HX-Request")
@require_POST
def entry_toggle(
    request: AuthenticatedHttpRequest, server_id: int, lorebook_id: int, entry_id: int
) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_LOREBOOKS)
    lorebook = _lorebook_or_404(server, lorebook_id)
    entry = LorebookEntry.objects.filter(lorebook=lorebook, pk=entry_id).first()
    if entry is None:
        raise Http404("No such entry.")
    enabled = request.POST.get("enabled") == "1"
    services.entries_set_enabled(lorebook=lorebook, entry_ids=[entry.pk], enabled=enabled, by=request.user)
    if request.htmx:
        entry.refresh_from_db()
        context = {"server": server, "lorebook": lorebook, "entry": entry, "can_manage": True}
        return render(request, "lorebooks/detail.html#entry-row", {**context, **_filters(request.POST)})
    return _back_to_entries(server, lorebook, request.POST)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def entries_bulk(request: AuthenticatedHttpRequest, server_id: int, lorebook_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_LOREBOOKS)
    lorebook = _lorebook_or_404(server, lorebook_id)
    filters = _filters(request.POST)
    matching = selectors.entries_for(lorebook, query=filters["q"], show=filters["show"])
    enabled = request.POST.get("enabled") == "1"
    count, word = matching.count(), "Enable" if enabled else "Disable"
    asked = ask_first(
        request,
        Confirmation(
            question=f"{word} {count} entr{'y' if count == 1 else 'ies'} of “{lorebook.name}”?",
            button=f"{word} {count} entr{'y' if count == 1 else 'ies'}",
            back=reverse("lorebooks:detail", args=[server.id, lorebook.pk]),
            affects=[
                f"Every entry{' the filter shows' if filters['q'] or filters['show'] else ''} is "
                f"{'switched on' if enabled else 'switched off'} at once; each can be switched back by hand."
            ],
        ),
    )
    if asked:
        return asked
    changed = services.entries_set_enabled(
        lorebook=lorebook,
        entry_ids=list(matching.values_list("pk", flat=True)),
        enabled=enabled,
        by=request.user,
    )
    message = f"{'Enabled' if enabled else 'Disabled'} {changed} entr{'y' if changed == 1 else 'ies'}."
    if request.htmx:
        lorebook.refresh_from_db()
        context = _detail_context(request, server, lorebook, filters)
        context["bulk_message"] = message
        return render(request, "lorebooks/detail.html#entry-list", context)
    messages.success(request, message)
    return _back_to_entries(server, lorebook, request.POST)


@login_required
@require_POST
def settings_update(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_LOREBOOKS)
    changes: dict[str, Any] = {}
    try:
        for name, label, kind in SETTING_FORM:
            if kind == "bool":
                changes[name] = request.POST.get(name) in ("1", "on", "true")
            else:
                raw = request.POST.get(name, "").strip()
                if not raw.lstrip("-").isdigit():
                    raise services.LorebookError(f"{label} must be a whole number.")
                changes[name] = int(raw)
        strategy = request.POST.get("strategy", "")
        changes["strategy"] = strategy if strategy in STRATEGIES else strategy or "character_first"
        services.settings_update(server=server, changes=changes, by=request.user)
    except REFUSALS as exc:
        show_refusal(request, exc)
    else:
        messages.success(request, "World Info settings saved.")
    return redirect(reverse("lorebooks:list", args=[server.id]) + "#settings")


# --- context builders and small helpers --------------------------------------------------------


def _lorebook_or_404(server: Server, lorebook_id: int) -> Lorebook:
    lorebook = selectors.lorebook_of(server, lorebook_id)
    if lorebook is None:
        raise Http404("No such lorebook.")
    lorebook.server = server
    return lorebook


def _upload_context(
    server: Server, form: dict[str, Any], *, error: str | None = None, clash: bool = False
) -> dict[str, Any]:
    return {
        "server": server,
        "form": form,
        "error": error,
        "clash": clash,
        "max_mib": settings.LOREBOOK_MAX_BYTES // 1024 // 1024 or 1,
    }


def _list_context(request: AuthenticatedHttpRequest, server: Server) -> dict[str, Any]:
    current = selectors.world_info_settings(server).to_dict()
    return {
        "server": server,
        "lorebooks": selectors.lorebooks_for(server),
        "can_manage": user_can(request.user, server, Action.MANAGE_LOREBOOKS),
        "setting_rows": [(name, label, kind, current[name]) for name, label, kind in SETTING_FORM],
        "strategy": current["strategy"],
        "strategies": STRATEGIES,
    }


def _filters(data: Any) -> dict[str, str]:
    show = data.get("show", "")
    return {"q": data.get("q", "").strip()[:200], "show": show if show in selectors.ENTRY_FILTERS else ""}


def _detail_context(
    request: AuthenticatedHttpRequest, server: Server, lorebook: Lorebook, filters: dict[str, str]
) -> dict[str, Any]:
    matching = selectors.entries_for(lorebook, query=filters["q"], show=filters["show"])
    page = Paginator(matching, ENTRIES_PER_PAGE).get_page(request.GET.get("page"))
    query = urlencode({key: value for key, value in filters.items() if value})
    return {
        "server": server,
        "lorebook": lorebook,
        "summary": LorebookSummary.from_dict(lorebook.summary) if lorebook.summary else None,
        "entries": page.object_list,
        "page": page,
        "page_query": f"{query}&" if query else "",
        "just_imported": request.GET.get("imported") == "1",
        "can_manage": user_can(request.user, server, Action.MANAGE_LOREBOOKS),
        "entry_filters": selectors.ENTRY_FILTER_LABELS,
        "filtered": bool(filters["q"] or filters["show"]),
        **filters,
    }


def _back_to_entries(server: Server, lorebook: Lorebook, data: Any) -> HttpResponse:
    url = reverse("lorebooks:detail", args=[server.id, lorebook.pk])
    query = urlencode({key: value for key, value in _filters(data).items() if value})
    return redirect(f"{url}?{query}#entries" if query else f"{url}#entries")
