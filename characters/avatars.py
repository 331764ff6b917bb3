"""The public avatar of a card (docs/groups.md#avatars): an image URL a Discord webhook can fetch with
no session. The URL carries an HMAC of the server and the card (the project's secret key), so it
cannot be guessed or moved to another server's card; it serves the card's own picture with its text
chunks left out (a card PNG holds the whole card), or a picture drawn from the name for a card that
came as JSON; once the card is deleted it answers 404. Card ids are never reused (the database's
sequences), so a deleted card's URL never comes back with another card behind it.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.crypto import constant_time_compare, salted_hmac
from django.views.decorators.http import require_GET

from core.fairness import ServerBusy, claim_share, light_share
from engine.cards import drawn_avatar, picture_only

from .models import Card as CardRow

_SALT = "tavernkeep.characters.avatar"
CACHE_SECONDS = 3600  # Discord and proxies may keep it an hour; a deleted card's URL 404s after that


def avatar_signature(server_id: int, card_id: int) -> str:
    return salted_hmac(_SALT, f"{server_id}:{card_id}", algorithm="sha256").hexdigest()[:32]


def avatar_path(server_id: int, card_id: int) -> str:
    """The card's public avatar path (make it absolute with the request's host)."""
    return reverse(
        "characters:public-avatar", args=[server_id, card_id, avatar_signature(server_id, card_id)]
    )


@light_share
@require_GET
def public_avatar(request: HttpRequest, server_id: int, card_id: int, signature: str) -> HttpResponse:
    if not constant_time_compare(signature, avatar_signature(server_id, card_id)):
        raise Http404("No such image.")
    try:
        claim_share(server_id)
    except ServerBusy:
        return HttpResponse(status=429, headers={"Retry-After": "1"})
    row = CardRow.objects.filter(server_id=server_id, pk=card_id).only("name", "avatar").first()
    if row is None:
        raise Http404("No such image.")
    body = None
    if row.avatar:
        try:
            body = picture_only(bytes(row.avatar))
        except ValueError:  # an image the importer kept but cannot be walked: draw one instead
            body = None
    response = HttpResponse(body or drawn_avatar(row.name), content_type="image/png")
    response["Cache-Control"] = f"public, max-age={CACHE_SECONDS}"
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'"
    return response
