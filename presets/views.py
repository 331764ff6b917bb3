"""Preset library pages: list, upload with its summary, one preset's nodes, and the help page.

Every page asks `get_server_for` first (404 for non-members, 403 for a role without the action).
Writes are POST forms that redirect without JavaScript, and answer with a partial under htmx.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import content_disposition_header, url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from core.errors import REFUSALS
from core.refusals import refusal_status, show_refusal
from core.uploads import body_limit
from engine.st_format import ImportSummary, preset_name_from_filename
from servers.confirm import Confirmation, ask_first
from servers.imports import on_clash_from
from servers.models import Server
from servers.permissions import Action, get_server_for, user_can
from servers.users import AuthenticatedHttpRequest

from . import selectors, services
from .channels import selectors as channel_selectors
from .forms import PresetUpload, UploadOptions, UploadRefused, read_preset_upload
from .lookups import preset_or_404
from .models import InjectionStyle, Preset, PresetNode
from .pending_uploads import drop_upload, keep_upload, pending_seconds, pending_upload
from .replace_review import ReplaceReview, review_replace
from .sampling import views as sampling_views
from .summary_display import summary_groups
from .versions import selectors as version_selectors
from .versions.display import diff_view


@login_required
@vary_on_headers("HX-Request")
@require_GET
def preset_list(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_PRESETS)
    context = _list_context(request, server)
    if request.htmx:
        return render(request, "presets/list.html#preset-table", context)
    return render(request, "presets/list.html", context)


@body_limit(lambda: settings.PRESET_MAX_BYTES)
@login_required
@vary_on_headers("HX-Request")
@require_http_methods(["GET", "POST"])
def preset_upload(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    form = UploadOptions()
    if request.method == "GET":
        return render(request, "presets/upload.html", _upload_context(server, form))
    error, status, pending_token = None, 200, None
    try:
        upload = _finishing(request, server) or read_preset_upload(request, default_activate=False)
        form = upload.options
        review = _replace_review(request, server, upload)
        if review is not None:
            context = {
                **_upload_context(server, form, pending=review[1]),
                "review": review[0],
                "diff": diff_view(review[0].diff),
            }
            template = "presets/upload.html#upload-result" if request.htmx else "presets/upload.html"
            return render(request, template, context)
        result = services.preset_import(
            server=server,
            raw=upload.raw,
            filename=upload.filename,
            name=form.name or None,
            on_clash=form.on_clash,
            activate=form.activate,
            by=request.user,
        )
    except services.PresetNameClash as exc:  # a conflict: the page keeps the file and asks what to do
        pending_token = keep_upload(
            user_id=request.user.pk,
            server_id=server.pk,
            raw=upload.raw,
            filename=upload.filename,
            options=form,
        )
        choose = (
            " Do you want to replace it, or keep both?"
            if pending_token
            else " Choose the file again, with “Replace it” or “Keep both” below."
        )
        error, status = exc.message + choose, 409
    except REFUSALS as exc:
        error, status = exc.message, refusal_status(exc)
        if isinstance(exc, UploadRefused):
            form = exc.options or form
    else:
        drop_upload(user_id=request.user.pk)
        url = reverse("presets:detail", args=[server.id, result.preset.pk]) + "?imported=1"
        if request.htmx:
            return HttpResponse(status=204, headers={"HX-Redirect": url})
        return redirect(url)
    context = _upload_context(server, form, error=error, clash=status == 409, pending=pending_token)
    if request.htmx:  # htmx swaps only 2xx answers; the error is in the partial
        return render(request, "presets/upload.html#upload-result", context)
    return render(request, "presets/upload.html", context, status=status)


def _finishing(request: AuthenticatedHttpRequest, server: Server) -> PresetUpload | None:
    """The kept upload when the user pressed "Replace" or "Keep both" after a clash; raises
    UploadRefused when it is no longer kept."""
    choice = request.POST.get("resolve", "")
    if choice not in ("replace", "keep_both"):
        return None
    pending = pending_upload(
        user_id=request.user.pk, server_id=server.pk, token=request.POST.get("pending", "")
    )
    if pending is None:
        raise UploadRefused(
            f"The upload was kept for {pending_seconds() // 60} minutes and has been discarded: choose the file again.",
            410,
        )
    options = UploadOptions(
        name=pending.options.name, activate=pending.options.activate, on_clash=on_clash_from(choice)
    )
    return PresetUpload(pending.raw, pending.filename, options)


def _replace_review(
    request: AuthenticatedHttpRequest, server: Server, upload: PresetUpload
) -> tuple[ReplaceReview, str] | None:
    """Before a replace: what it would change and the kept upload's token, so the admin confirms
    it first. None when nothing would be replaced, the admin has confirmed, or the upload cannot be
    kept (the cache is down: the replace then runs as asked)."""
    if upload.options.on_clash != "replace" or request.POST.get("confirm") == "1":
        return None
    name = services.clean_name(upload.options.name) or services.clean_name(
        preset_name_from_filename(upload.filename)
    )
    existing = selectors.preset_named(server, name) if name else None
    if existing is None:
        return None
    token = request.POST.get("pending", "") if request.POST.get("resolve") == "replace" else None
    token = token or keep_upload(
        user_id=request.user.pk,
        server_id=server.pk,
        raw=upload.raw,
        filename=upload.filename,
        options=upload.options,
    )
    if token is None:
        return None
    return review_replace(preset=existing, raw=upload.raw, filename=upload.filename), token


@login_required
@vary_on_headers("HX-Request")
@require_GET
def preset_detail(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_PRESETS)
    preset = preset_or_404(server, preset_id)
    context = detail_context(request, server, preset)
    if request.htmx and request.GET.get("partial") == "nodes":
        return render(request, "presets/detail.html#node-list", context)
    return render(request, "presets/detail.html", context)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def preset_activate(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    services.preset_activate(preset=preset, by=request.user)
    return _after_list_action(request, server, f"“{preset.name}” is now the active preset.")


@login_required
@vary_on_headers("HX-Request")
@require_POST
def preset_deactivate(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    services.preset_deactivate(preset=preset, by=request.user)
    return _after_list_action(request, server, "No preset is active: the bot uses its native prompt order.")


@login_required
@vary_on_headers("HX-Request")
@require_POST
def preset_delete(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    if asked := ask_first(request, _delete_question(server, preset)):
        return asked
    was_active = preset.is_active
    services.preset_delete(preset=preset, by=request.user)
    note = " It was active, so the bot is back to its native prompt order." if was_active else ""
    if not request.htmx:
        messages.success(request, f"Deleted “{preset.name}”.{note}")
        return redirect("presets:list", server_id=server.id)
    return _after_list_action(request, server, "")


def _delete_question(server: Server, preset: Preset) -> Confirmation:
    channels = [
        use.channel_name for use in channel_selectors.channel_uses(server) if use.preset_id == preset.pk
    ]
    affects = [
        f"{preset.node_count} node{'s' * (preset.node_count != 1)} and every version of the preset go "
        "with it: Versions cannot bring a deleted preset back (download it first to keep a copy)."
    ]
    if preset.is_active:
        affects.append("It is the server's active preset: the bot goes back to its native prompt order.")
    if channels:
        affects.append(f"Channels that use it go back to the server's preset: {', '.join(channels)}.")
    return Confirmation(
        question=f"Delete the preset “{preset.name}”?",
        button="Delete the preset",
        back=reverse("presets:detail", args=[server.id, preset.pk]),
        affects=affects,
    )


@login_required
@require_POST
def preset_rename(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    try:
        services.preset_rename(preset=preset, name=request.POST.get("name", ""), by=request.user)
    except REFUSALS as exc:
        show_refusal(request, exc)
    else:
        messages.success(request, f"Renamed to “{preset.name}”.")
    return redirect("presets:detail", server_id=server.id, preset_id=preset.pk)


@login_required
@require_POST
def preset_style(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    try:
        services.preset_set_injection_style(
            preset=preset, style=request.POST.get("style", ""), by=request.user
        )
    except REFUSALS as exc:
        show_refusal(request, exc)
    else:
        messages.success(
            request, f"Depth injections now use the “{preset.get_injection_style_display()}” style."
        )
    return redirect("presets:detail", server_id=server.id, preset_id=preset.pk)


@login_required
@require_GET
def preset_download(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    """The preset as it is now (its current version, every edit, switch, move and rollback in it) as
    SillyTavern JSON: the same file as the Versions page's download of that version (docs/editor.md)."""
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = server.presets.defer("stored_text").filter(pk=preset_id).first()
    if preset is None:
        raise Http404("No such preset.")
    filename = f"{preset.name}.json"
    return HttpResponse(
        version_selectors.export_version(preset, preset.version).encode("utf-8"),
        content_type="application/json; charset=utf-8",
        headers={"Content-Disposition": content_disposition_header(True, filename)},
    )


def _with_counts(request: AuthenticatedHttpRequest, response: HttpResponse, preset: Preset) -> HttpResponse:
    """Append the page header's node counts as an out-of-band swap, so they follow a toggle."""
    counts = render_to_string(
        "presets/detail.html#preset-counts",
        {"preset": preset, "counts": selectors.node_counts(preset), "oob": True},
        request=request,
    )
    response.content += counts.encode()
    return response


@login_required
@vary_on_headers("HX-Request")
@require_POST
def node_toggle(
    request: AuthenticatedHttpRequest, server_id: int, preset_id: int, node_id: int
) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    node = PresetNode.objects.filter(preset=preset, pk=node_id).first()
    if node is None:
        raise Http404("No such node.")
    node.preset = preset
    node.encoding = server.token_encoding
    try:
        services.node_set_enabled(node=node, enabled=request.POST.get("enabled") == "1", by=request.user)
    except REFUSALS as exc:
        if request.htmx:
            return HttpResponse(exc.message, status=400)
        messages.error(request, exc.message)
    if request.htmx:
        filters = _filters(request.POST)
        context = {
            "server": server,
            "preset": preset,
            "node": node,
            "can_manage": True,
            "filtered": bool(filters["q"] or filters["kind"]),
            **filters,
        }
        return _with_counts(request, render(request, "presets/_node_row.html", context), preset)
    return _back_to_nodes(server, preset, request.POST)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def nodes_bulk(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    filters = _filters(request.POST)
    matching = selectors.toggleable(selectors.nodes_for(preset, query=filters["q"], kind=filters["kind"]))
    enabled = request.POST.get("enabled") == "1"
    count, word = matching.count(), "Enable" if enabled else "Disable"
    asked = ask_first(
        request,
        Confirmation(
            question=f"{word} {count} node{'s' * (count != 1)} of “{preset.name}”?",
            button=f"{word} {count} node{'s' * (count != 1)}",
            back=reverse("presets:detail", args=[server.id, preset.pk]) + "#nodes",
            affects=[
                f"Every switchable node{' the filter shows' if filters['q'] or filters['kind'] else ''} is "
                f"{'switched on' if enabled else 'switched off'} at once (chatHistory is left alone).",
                "Versions can roll this back: it is recorded as one version.",
            ],
        ),
    )
    if asked:
        return asked
    changed = services.nodes_set_enabled(
        preset=preset, node_ids=list(matching.values_list("pk", flat=True)), enabled=enabled, by=request.user
    )
    if request.htmx:
        context = detail_context(request, server, preset, filters=filters)
        context["bulk_message"] = (
            f"{'Enabled' if enabled else 'Disabled'} {changed} node{'s' * (changed != 1)}."
        )
        return _with_counts(request, render(request, "presets/detail.html#node-list", context), preset)
    messages.success(request, f"{'Enabled' if enabled else 'Disabled'} {changed} node{'s' * (changed != 1)}.")
    return _back_to_nodes(server, preset, request.POST)


@login_required
def help_page(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(request, "help.html", {"max_mib": settings.PRESET_MAX_BYTES // 1024 // 1024 or 1})


# --- context builders and small helpers --------------------------------------------------------


def _upload_context(
    server: Server,
    form: UploadOptions,
    *,
    error: str | None = None,
    clash: bool = False,
    pending: str | None = None,
) -> dict[str, Any]:
    return {
        "server": server,
        "form": form,
        "error": error,
        "clash": clash,
        "pending": pending,
        "pending_minutes": pending_seconds() // 60,
        "max_bytes": settings.PRESET_MAX_BYTES,
        "max_mib": settings.PRESET_MAX_BYTES // 1024 // 1024 or 1,
    }


def _list_context(request: AuthenticatedHttpRequest, server: Server) -> dict[str, Any]:
    presets = selectors.presets_for(server)
    return {
        "server": server,
        "presets": presets,
        "active": next((p for p in presets if p.is_active), None),
        "can_manage": user_can(request.user, server, Action.MANAGE_PRESETS),
        "channel_uses": channel_selectors.channel_uses(server),
        "known_channels": channel_selectors.known_channels(server),
    }


# A big preset's node list comes a page at a time (nemoengine-v10's 323 rows were 0.86 MB of HTML and
# 0.7 s to render; docs/editor.md): 50 rows fill about two laptop screens.
NODES_PER_PAGE = 50


@dataclass(frozen=True, slots=True)
class NodePages:
    """Which slice of the (filtered) node list a page shows, and the links to the others."""

    number: int
    count: int
    total: int
    first: int
    last: int

    @property
    def paged(self) -> bool:
        return self.count > 1

    @property
    def links(self) -> list[tuple[int, int, int]]:
        """(page, first row, last row) for every page, rows numbered from 1."""
        return [
            (n, (n - 1) * NODES_PER_PAGE + 1, min(n * NODES_PER_PAGE, self.total))
            for n in range(1, self.count + 1)
        ]


def node_pages(total: int, asked: Any) -> NodePages:
    """The page `asked` (a number or its text; anything else is page 1) of `total` rows."""
    count = max(1, -(-total // NODES_PER_PAGE))
    try:
        number = min(max(int(str(asked)), 1), count)
    except (TypeError, ValueError):
        number = 1
    first = (number - 1) * NODES_PER_PAGE
    return NodePages(
        number=number, count=count, total=total, first=first, last=min(first + NODES_PER_PAGE, total)
    )


def _filters(data: Any) -> dict[str, str]:
    kind = data.get("kind", "")
    return {"q": data.get("q", "").strip()[:200], "kind": kind if kind in selectors.NODE_FILTERS else ""}


def detail_context(
    request: AuthenticatedHttpRequest,
    server: Server,
    preset: Preset,
    *,
    filters: dict[str, str] | None = None,
    page: Any = None,
) -> dict[str, Any]:
    filters = filters or _filters(request.GET)
    summary = ImportSummary.from_dict(preset.summary) if preset.summary else None
    filtered = bool(filters["q"] or filters["kind"])
    matching = selectors.nodes_for(preset, query=filters["q"], kind=filters["kind"])
    paging = node_pages(matching.count(), page if page is not None else request.GET.get("page"))
    nodes = list(matching[paging.first : paging.last])
    for node in nodes:
        node.encoding = server.token_encoding
    return {
        "server": server,
        "preset": preset,
        "summary": summary,
        "summary_groups": summary_groups(summary) if summary else (),
        "settings_rows": selectors.prompt_settings(preset).to_dict().items(),
        "nodes": nodes,
        "counts": selectors.node_counts(preset),
        "just_imported": request.GET.get("imported") == "1",
        "can_manage": user_can(request.user, server, Action.MANAGE_PRESETS),
        "styles": InjectionStyle.choices,
        "node_filters": selectors.NODE_FILTERS,
        "filtered": filtered,
        "paging": paging,
        "enabled_tokens": selectors.enabled_tokens(preset, server.token_encoding),
        **filters,
        **sampling_views.panel_context(request, server, preset),
    }


def _after_list_action(request: AuthenticatedHttpRequest, server: Server, message: str) -> HttpResponse:
    if request.htmx:
        return render(request, "presets/list.html#preset-table", _list_context(request, server))
    if message:
        messages.success(request, message)
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect("presets:list", server_id=server.id)


def _back_to_nodes(server: Server, preset: Preset, data: Any) -> HttpResponse:
    url = reverse("presets:detail", args=[server.id, preset.pk])
    query = urlencode({key: value for key, value in _filters(data).items() if value})
    return redirect(f"{url}?{query}#nodes" if query else f"{url}#nodes")
