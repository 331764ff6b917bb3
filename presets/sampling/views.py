"""The server's sampling choice: shown on the preset page (and on its own page), changed by admins.

GET is for every member (READ_SAMPLING); POST needs MANAGE_SAMPLING. The form works without
JavaScript (POST, then redirect back); under htmx the panel is swapped in place.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from core.errors import REFUSALS
from engine.sampling import MODE_LABELS, PROVIDER_LABELS, REASONING_EFFORTS, SETTING_NAMES
from servers.models import Server
from servers.permissions import Action, get_server_for, user_can
from servers.users import AuthenticatedHttpRequest

from .. import selectors
from ..models import Preset
from . import selectors as sampling_selectors
from . import services as sampling_services

PANEL = "presets/sampling.html#sampling-panel"


@login_required
@vary_on_headers("HX-Request")
@require_http_methods(["GET", "POST"])
def sampling(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    needs = Action.MANAGE_SAMPLING if request.method == "POST" else Action.READ_SAMPLING
    server = get_server_for(request.user, server_id, needs=needs)
    preset = _preset(server, request.POST if request.method == "POST" else request.GET)
    if request.method == "GET":
        return render(request, "presets/sampling.html", panel_context(request, server, preset))
    try:
        sampling_services.sampling_set(
            server=server,
            mode=request.POST.get("mode") or None,
            provider=request.POST.get("provider") or None,
            set_values={
                n: request.POST[f"value-{n}"]
                for n in SETTING_NAMES
                if request.POST.get(f"value-{n}", "").strip()
            },
            replace_values=True,
            by=request.user,
        )
    except REFUSALS as exc:
        context = panel_context(request, server, preset, error=exc.message, typed=request.POST)
        if request.htmx:  # htmx swaps only 2xx answers; the error is in the panel
            return render(request, PANEL, context)
        return render(request, "presets/sampling.html", context, status=400)
    if request.htmx:
        return render(request, PANEL, {**panel_context(request, server, preset), "saved": True})
    messages.success(request, "Sampling choice saved.")
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect("presets:sampling", server_id=server.id)


def panel_context(
    request: AuthenticatedHttpRequest,
    server: Server,
    preset: Preset | None,
    *,
    error: str | None = None,
    typed: Any = None,
) -> dict[str, Any]:
    """What the sampling panel needs, for the preset page and this view."""
    choice = sampling_selectors.sampling_choice(server.pk)
    panel = sampling_selectors.sampling_panel(choice, preset)
    current = choice.values.to_dict()
    fields = [
        {
            "name": name,
            "value": typed.get(f"value-{name}", "") if typed is not None else _shown(current.get(name)),
        }
        for name in SETTING_NAMES
    ]
    return {
        "server": server,
        "sampling_preset": preset,
        "sampling": panel,
        "sampling_params": [(name, _shown(value)) for name, value in panel.generation.params.items()],
        "sampling_fields": fields,
        "sampling_modes": MODE_LABELS.items(),
        "sampling_providers": PROVIDER_LABELS.items(),
        "reasoning_efforts": REASONING_EFFORTS,
        "sampling_error": error,
        "can_manage_sampling": user_can(request.user, server, Action.MANAGE_SAMPLING),
    }


def _shown(value: Any) -> str:
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value)


def _preset(server: Server, data: Any) -> Preset | None:
    """The preset the panel is about: the one asked for (of this server), else the active one."""
    wanted = str(data.get("preset", ""))
    if wanted.isdigit():
        found = selectors.preset_of(server, int(wanted))
        if found is not None:
            return found
    return sampling_selectors.active_preset(server)
