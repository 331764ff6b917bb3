"""Regex script pages: the server's own list (upload, add, edit, reorder, switch, delete), a preset's
scripts with this server's switches, and the reply-cleaning tester.

Every view asks `get_server_for` first: members read (READ_REGEX), admins write (MANAGE_REGEX).
Writes are POST forms that redirect without JavaScript and answer with the list partial under htmx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from core import offload
from core.errors import REFUSALS
from engine.regex import MAX_EXPORT_BYTES, read_export
from presets import cache as preset_cache
from presets import selectors as preset_selectors
from servers.confirm import Confirmation, ask_first
from servers.models import Server
from servers.permissions import Action, get_server_for, user_can
from servers.users import AuthenticatedHttpRequest

from . import selectors, services
from .forms import ScriptForm, TesterForm, UploadForm
from .models import ServerScript

if TYPE_CHECKING:  # annotations only: presets' rows are read through presets.selectors
    from presets.models import Preset


def _list_context(request: AuthenticatedHttpRequest, server: Server, **extra: Any) -> dict[str, Any]:
    active = preset_selectors.active_preset_row(server.pk)
    return {
        "server": server,
        "rows": selectors.server_script_rows(server.pk),
        "active": active,
        "can_manage": user_can(request.user, server, Action.MANAGE_REGEX),
        "upload_form": UploadForm(),
        "form": ScriptForm(initial={"placement": [2]}),
        **extra,
    }


def _render_list(
    request: AuthenticatedHttpRequest, server: Server, status: int = 200, **extra: Any
) -> HttpResponse:
    context = _list_context(request, server, **extra)
    template = "regex_scripts/list.html#script-table" if request.htmx else "regex_scripts/list.html"
    return render(request, template, context, status=status)


@login_required
@vary_on_headers("HX-Request")
@require_GET
def script_list(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_REGEX)
    return _render_list(request, server)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def script_upload(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_REGEX)
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _render_list(request, server, 400, upload_error="Choose a regex export file to upload.")
    upload = form.cleaned_data["file"]
    try:
        scripts = read_export(upload.read(MAX_EXPORT_BYTES + 1))
        _, compiled = services.scripts_import(
            server=server, scripts=scripts, by=request.user, source=upload.name
        )
    except REFUSALS as exc:
        return _render_list(request, server, 400, upload_error=exc.message)
    inactive = [c for c in compiled if not c.active]
    note = f"Imported {len(compiled)} script{'s' if len(compiled) != 1 else ''}"
    note += f"; {len(inactive)} will not run (see the reasons below)." if inactive else "."
    if refused := len(scripts) - len(compiled):
        note += f" {services.refused_sentence(refused)}"
    messages.success(request, note)
    return redirect("regex_scripts:list", server_id=server.pk)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def script_add(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_REGEX)
    form = ScriptForm(request.POST)
    if not form.is_valid():
        return _render_list(request, server, 400, form=form)
    try:
        services.scripts_import(server=server, scripts=[form.to_script()], by=request.user)
    except REFUSALS as exc:
        return _render_list(request, server, 400, form=form, upload_error=exc.message)
    messages.success(request, "Script added.")
    return redirect("regex_scripts:list", server_id=server.pk)


def _row_or_404(server: Server, script_id: int) -> ServerScript:
    row = selectors.server_script(server.pk, script_id)
    if row is None:
        raise Http404("No such script.")
    return row


@login_required
@vary_on_headers("HX-Request")
@require_http_methods(["GET", "POST"])
def script_edit(request: AuthenticatedHttpRequest, server_id: int, script_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_REGEX)
    row = _row_or_404(server, script_id)
    current = next(r for r in selectors.server_script_rows(server.pk) if r.row and r.row.pk == row.pk)
    if request.method == "POST":
        form = ScriptForm(request.POST)
        if form.is_valid():
            services.script_update(
                row=row, script=form.to_script(script_id=current.script.id), by=request.user
            )
            messages.success(request, "Script saved.")
            return redirect("regex_scripts:list", server_id=server.pk)
        status = 400
    else:
        form = ScriptForm(initial=ScriptForm.initial_for(current.script))
        status = 200
    return render(
        request, "regex_scripts/edit.html", {"server": server, "row": current, "form": form}, status=status
    )


def _row_action(
    request: AuthenticatedHttpRequest, server_id: int, script_id: int, action: Any
) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_REGEX)
    action(_row_or_404(server, script_id))
    if request.htmx:
        return _render_list(request, server)
    return redirect("regex_scripts:list", server_id=server.pk)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def script_toggle(request: AuthenticatedHttpRequest, server_id: int, script_id: int) -> HttpResponse:
    enabled = request.POST.get("enabled") == "1"
    return _row_action(
        request,
        server_id,
        script_id,
        lambda row: services.script_set_enabled(row=row, enabled=enabled, by=request.user),
    )


@login_required
@vary_on_headers("HX-Request")
@require_POST
def script_move(request: AuthenticatedHttpRequest, server_id: int, script_id: int) -> HttpResponse:
    direction: Literal["up", "down"] = "up" if request.POST.get("direction") == "up" else "down"
    return _row_action(
        request,
        server_id,
        script_id,
        lambda row: services.script_move(row=row, direction=direction, by=request.user),
    )


@login_required
@vary_on_headers("HX-Request")
@require_POST
def script_delete(request: AuthenticatedHttpRequest, server_id: int, script_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_REGEX)
    row = _row_or_404(server, script_id)
    asked = ask_first(
        request,
        Confirmation(
            question=f"Delete the regex script “{row}”?",
            button="Delete the script",
            back=reverse("regex_scripts:list", args=[server.pk]),
            affects=[
                "Replies and prompts are no longer changed by it; no version keeps a script "
                "(switch it off instead to keep it)."
            ],
        ),
    )
    if asked:
        return asked
    return _row_action(
        request, server_id, script_id, lambda row: services.script_delete(row=row, by=request.user)
    )


def _preset_or_404(server: Server, preset_id: int) -> Preset:
    preset = preset_selectors.preset_of(server, preset_id)
    if preset is None:
        raise Http404("No such preset.")
    return preset


def _preset_context(request: AuthenticatedHttpRequest, server: Server, preset: Preset) -> dict[str, Any]:
    compiled = preset_cache.get_preset(preset.pk)
    return {
        "server": server,
        "preset": preset,
        "rows": selectors.preset_script_rows(compiled),
        "can_manage": user_can(request.user, server, Action.MANAGE_REGEX),
    }


@login_required
@vary_on_headers("HX-Request")
@require_GET
def preset_scripts(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_REGEX)
    preset = _preset_or_404(server, preset_id)
    return render(request, "regex_scripts/preset.html", _preset_context(request, server, preset))


@login_required
@vary_on_headers("HX-Request")
@require_POST
def preset_script_toggle(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_REGEX)
    preset = _preset_or_404(server, preset_id)
    key = request.POST.get("key", "")
    context = _preset_context(request, server, preset)
    if key not in {row.key for row in context["rows"]}:
        raise Http404("No such script in this preset.")
    services.preset_script_switch(
        preset=preset, script_key=key, enabled=request.POST.get("enabled") == "1", by=request.user
    )
    if request.htmx:
        return render(
            request, "regex_scripts/preset.html#preset-scripts", _preset_context(request, server, preset)
        )
    return redirect("regex_scripts:preset", server_id=server.pk, preset_id=preset.pk)


@login_required
@vary_on_headers("HX-Request")
@require_http_methods(["GET", "POST"])
def tester(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.VIEW_PREVIEW)
    names = [preset.name for preset in preset_selectors.presets_for(server)]
    form = TesterForm(request.POST or None, preset_names=names)
    context: dict[str, Any] = {"server": server, "form": form}
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:  # in a child process (core/offload.py): a hostile script's run is bounded in wall time too
                context["result"] = offload.run(
                    selectors.clean_for_server,
                    server_id=server.pk,
                    text=data["text"],
                    user_message=data["kind"] == "user_message",
                    preset_name=data["preset"] or None,
                    impersonate=data["impersonate"],
                    seed=data["seed"],
                )
            except REFUSALS as exc:
                context["error"] = exc.message
                status = 503 if isinstance(exc, offload.OffloadUnavailable) else 400
        else:
            status = 400
    template = "regex_scripts/tester.html#tester-result" if request.htmx else "regex_scripts/tester.html"
    return render(request, template, context, status=status)
