"""The channel presets form on the presets page: an admin gives a channel (or a thread) its own
preset, or hands it back to the server's active one (Action.MANAGE_PRESETS)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from core.errors import REFUSALS
from core.refusals import show_refusal
from servers import selectors as server_selectors
from servers.permissions import Action, get_server_for
from servers.users import AuthenticatedHttpRequest

from .. import selectors
from ..lookups import posted_number
from . import services as channel_services


@login_required
@require_POST
def channel_set(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    channel_id = posted_number(request.POST.get("channel"))
    preset_id = request.POST.get("preset", "")
    try:
        if channel_id is None:
            typed = request.POST.get("channel", "").strip()[:100]
            raise channel_services.ChannelPresetRefused(
                f"“{typed}” is not a channel id: give the channel's id (digits only)."
                if typed
                else "Choose a channel."
            )
        preset = None
        if preset_id:
            preset = selectors.preset_of(server, posted_number(preset_id) or 0)
            if preset is None:
                raise channel_services.ChannelPresetRefused("Choose one of this server's presets.")
        channel_services.channel_preset_set(
            server=server, channel_id=channel_id, preset=preset, by=request.user
        )
    except REFUSALS as exc:
        show_refusal(request, exc)
    else:
        name = server_selectors.directory_names(server.pk).channels.get(channel_id)
        channel = f"#{name}" if name else f"Channel {channel_id}"
        messages.success(
            request,
            f"{channel} now uses “{preset.name}”."
            if preset
            else f"{channel} uses the server's active preset again.",
        )
    return redirect(reverse("presets:list", args=[server.id]) + "#channels")
