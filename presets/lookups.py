"""What the preset views share: this server's preset or a 404, and a whole number from a form."""

from __future__ import annotations

from typing import Any

from django.http import Http404

from servers.models import Server

from . import selectors
from .models import Preset


def preset_or_404(server: Server, preset_id: int) -> Preset:
    preset = selectors.preset_of(server, preset_id)
    if preset is None:
        raise Http404("No such preset.")
    preset.server = server
    return preset


def posted_number(value: Any) -> int | None:
    """A form field as a whole number (digits only, under 20 of them), or None."""
    text = str(value or "").strip()
    return int(text) if text.isdigit() and len(text) < 20 else None
