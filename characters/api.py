"""The bot's card API: the active character's fields (from the cache)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse

from servers.api_auth import api_view

from . import cache as card_cache
from .reports import card_fields


@api_view
def active_card(request: HttpRequest, server_id: int) -> HttpResponse:
    if request.method != "GET":
        return JsonResponse({"error": "Use GET to read the active character card."}, status=405)
    card = card_cache.get_active_card(server_id)
    return JsonResponse(
        {"card": None if card is None else card_fields(card)}, json_dumps_params={"ensure_ascii": False}
    )
