"""The version pages of a preset: the list, the diff between two versions, a version downloaded as
SillyTavern JSON, and the rollback. Moderators and support read (Action.READ_PRESETS); admins
download and roll back (Action.MANAGE_PRESETS)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_POST

from core.errors import REFUSALS
from core.refusals import show_refusal
from servers.permissions import Action, get_server_for, user_can
from servers.users import AuthenticatedHttpRequest

from ..editor import services as edit_services
from ..lookups import posted_number, preset_or_404
from ..services import PresetError
from . import selectors as versions
from .display import diff_view


@login_required
@require_GET
def version_list(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_PRESETS)
    preset = preset_or_404(server, preset_id)
    rows = versions.versions_of(preset)
    previous = [row.number for row in rows[1:]] + [None]
    context = {
        "server": server,
        "preset": preset,
        "versions": rows,
        "rows": list(zip(rows, previous, strict=True)),
        "can_manage": user_can(request.user, server, Action.MANAGE_PRESETS),
    }
    return render(request, "presets/versions.html", context)


@login_required
@require_GET
def version_diff(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_PRESETS)
    preset = preset_or_404(server, preset_id)
    after = posted_number(request.GET.get("to")) or preset.version
    before = posted_number(request.GET.get("from")) or max(1, after - 1)
    try:
        diff = versions.diff(preset, before, after)
    except versions.VersionNotFound as exc:
        raise Http404(exc.message) from None
    context = {
        "server": server,
        "preset": preset,
        "diff": diff_view(diff),
        "before": before,
        "after": after,
        "can_manage": user_can(request.user, server, Action.MANAGE_PRESETS),
    }
    return render(request, "presets/version_diff.html", context)


@login_required
@require_GET
def version_download(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    number = posted_number(request.GET.get("version")) or preset.version
    try:
        text = versions.export_version(preset, number)
    except versions.VersionNotFound as exc:
        raise Http404(exc.message) from None
    return HttpResponse(
        text.encode("utf-8"),
        content_type="application/json; charset=utf-8",
        headers={"Content-Disposition": content_disposition_header(True, f"{preset.name} v{number}.json")},
    )


@login_required
@require_POST
def preset_rollback(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    target = posted_number(request.POST.get("to"))
    try:
        if target is None:
            raise PresetError("Choose the version to roll back to.")
        result = edit_services.preset_rollback(preset=preset, to=target, by=request.user)
    except REFUSALS as exc:
        show_refusal(request, exc)
    else:
        messages.success(request, f"Rolled back to version {target}: this is now version {result.version}.")
    return redirect("presets:versions", server_id=server.id, preset_id=preset.pk)
