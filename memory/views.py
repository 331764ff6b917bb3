"""The moderators' short-term memory review page (docs/memory.md): pick a channel and a user, see every
entry's verdict and the items the contributor would produce — read from `selectors.load_stm`, the
function the assembler calls — and edit private channels and the privacy bypass.

Every view asks `get_server_for` first (404 for non-members, 403 for a missing role). Writes are
POST forms that redirect without JavaScript and answer with the review partial under htmx.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from engine import (
    CUT_BY_CAP,
    EXPIRED,
    HIDDEN_NO_OPT_IN,
    HIDDEN_PRIVATE_CHANNEL,
    HIDDEN_PRIVATE_PARENT,
    SAME_CHANNEL,
    SHOWN,
    StmContext,
)
from servers import selectors as server_selectors
from servers import services as server_services
from servers.models import Server
from servers.permissions import Action, get_server_for, user_can
from servers.users import AuthenticatedHttpRequest

from . import selectors, services
from .models import StmEntry

VERDICT_LABELS = {
    SHOWN: ("shown", "ok"),
    SAME_CHANNEL: ("same channel", "ok"),
    HIDDEN_PRIVATE_CHANNEL: ("hidden: private channel", "warn"),
    HIDDEN_PRIVATE_PARENT: ("hidden: private parent", "warn"),
    HIDDEN_NO_OPT_IN: ("hidden: no cross-server opt-in", "warn"),
    CUT_BY_CAP: ("cut by the cap", "warn"),
    EXPIRED: ("expired", "danger"),
}
REVIEW_FIELDS = ("channel", "user", "tools", "provider", "lineage")
# The providers the bot may name in `stm_context.provider`, in the admin's words; NovelAI cannot call
# the memory tool (docs/memory.md), so reviewing as NovelAI shows what a bot without tools sees.
PROVIDERS = (("openai", "OpenAI"), ("anthropic", "Anthropic"), ("gemini", "Gemini"), ("novelai", "NovelAI"))
SNOWFLAKE_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class ReviewRow:
    """One stored entry as the page shows it. Other servers' text is shown only when it reaches the prompt."""

    verdict: str
    label: str
    tone: str
    entry: StmEntry
    where: str
    channel_label: str
    age: timedelta
    reveal: bool


@login_required
@vary_on_headers("HX-Request")
@require_GET
def review(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.REVIEW_STM)
    context = _review_context(request, server, request.GET)
    if request.htmx:
        return render(request, "memory/review.html#review-body", context)
    return render(request, "memory/review.html", context)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def channel_private(request: AuthenticatedHttpRequest, server_id: int, channel_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRIVACY)
    channel = server_selectors.channel_by_id(server.pk, channel_id)
    if channel is None or channel.server_id != server.pk:
        raise Http404("No such channel on this server.")
    server_services.channel_set_private(
        server=server, channel=channel, private=request.POST.get("private") == "on", by=request.user
    )
    return _after_write(request, server)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def privacy_bypass(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRIVACY)
    services.server_set_privacy_bypass(
        server=server, bypass=request.POST.get("bypass") == "on", by=request.user
    )
    return _after_write(request, server)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def receive_other_servers(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_CROSS_SERVER_MEMORY)
    services.server_set_receive_other_servers(
        server=server, receive=request.POST.get("receive") == "on", by=request.user
    )
    return _after_write(request, server)


def _after_write(request: AuthenticatedHttpRequest, server: Server) -> HttpResponse:
    """The review partial for htmx; otherwise back to the review the form was posted from."""
    if request.htmx:
        return render(
            request, "memory/review.html#review-body", _review_context(request, server, request.POST)
        )
    query = urlencode({k: request.POST[k] for k in REVIEW_FIELDS if request.POST.get(k)})
    return redirect(reverse("memory:review", args=[server.pk]) + (f"?{query}" if query else ""))


def _snowflake(text: str | None) -> int | None:
    text = (text or "").strip()
    if text.isdigit() and 0 < int(text) <= SNOWFLAKE_MAX:
        return int(text)
    return None


def _provider(value: str | None) -> str:
    value = (value or "").strip().lower()
    return value if value in dict(PROVIDERS) else "openai"


def _review_context(request: AuthenticatedHttpRequest, server: Server, params: QueryDict) -> dict[str, Any]:
    now = timezone.now()
    form = {
        "channel": (params.get("channel") or "").strip(),
        "user": (params.get("user_id") or params.get("user") or "").strip(),
        "tools": "no" if params.get("tools") == "no" else "yes",
        "provider": _provider(params.get("provider")),
        "lineage": (params.get("lineage") or "").strip()[:100],
    }
    users = selectors.users_seen_in(server)
    names = server_selectors.directory_names(server.pk)
    directory_members, pushed = names.members, names.channels
    # This server's names only: what its bot sent with turns, the pushed directory first.
    member_names = {user: name for user, name in users if name} | directory_members
    channels = server_selectors.channels_for(server)
    context: dict[str, Any] = {
        "server": server,
        "form": form,
        "providers": PROVIDERS,
        "can_manage": user_can(request.user, server, Action.MANAGE_PRIVACY),
        "can_manage_receive": user_can(request.user, server, Action.MANAGE_CROSS_SERVER_MEMORY),
        "can_see_opt_in": user_can(request.user, server, Action.SEE_OPT_IN),
        "channels": channels,
        # The review's picker: once the bot has pushed a directory, the channels of its latest push.
        "picker_channels": [c for c in channels if c.discord_id in pushed] if pushed else channels,
        "users": users,
        "members": _member_choices(users, member_names),
        "has_directory": bool(directory_members),
        "member_names": member_names,
        "reviewed": False,
        "error": "",
    }
    if not form["channel"] and not form["user"]:
        return context
    channel_id, user_id = _snowflake(form["channel"]), _snowflake(form["user"])
    if channel_id is None or user_id is None:
        context["error"] = "Choose a channel and a user (Discord ids) to review."
        return context
    current = server_selectors.channel_by_id(server.pk, channel_id)
    if current is not None and current.server_id != server.pk:
        # DMs and other servers' channels are not this server's to review (their text is private).
        context["error"] = f"Channel {channel_id} is not a channel of this server."
        return context
    stm_context = StmContext(
        channel=channel_id,
        user=user_id,
        lineage=form["lineage"],
        has_tools=form["tools"] == "yes",
        provider=form["provider"],
    )
    loaded = selectors.load_stm(
        server_id=server.pk, context=stm_context, now=now, include_expired=True, with_rows=True
    )
    person = selectors.discord_user(user_id)
    seen = {user for user, _ in users}
    context.update(
        unknown_user=user_id not in seen and user_id not in member_names,
        reviewed=True,
        current=current,
        person=person,
        person_name=member_names.get(user_id, ""),
        consent_here=server.pk in loaded.consents,
        consents_elsewhere=len(loaded.consents - {server.pk}) if server.stm_receive_other_servers else 0,
        dm=loaded.dm,
        contribution=loaded.contribution,
        rows=[_row(v.verdict, loaded.entries[v.entry_id], server, now) for v in loaded.contribution.verdicts],
        # What group members keep privately in this channel (docs/groups.md): it reaches their prompts.
        member_notes=[
            note for notes in selectors.CHANNEL_NOTES for note in notes(server, channel=channel_id)
        ],
    )
    return context


MAX_MEMBER_CHOICES = 1000


def _member_choices(users: list[tuple[int, str]], member_names: dict[int, str]) -> list[tuple[int, str]]:
    """The member picker: who has memories here first, then the directory's other members, by name.
    Names are this server's own (the directory, else what its bot sent with a turn)."""
    choices = [(user, member_names.get(user) or name or f"user {user}") for user, name in users]
    listed = {user for user, _ in users}
    others = sorted(
        ((member_id, name) for member_id, name in member_names.items() if member_id not in listed),
        key=lambda pair: pair[1].casefold(),
    )
    shown = (choices + others)[:MAX_MEMBER_CHOICES]
    # Two members called "Mira" are told apart by the end of their Discord ids.
    counts = Counter(name.casefold() for _, name in shown)
    return [(i, f"{name} (…{str(i)[-4:]})" if counts[name.casefold()] > 1 else name) for i, name in shown]


def _row(verdict: str, entry: StmEntry, server: Server, now: datetime) -> ReviewRow:
    label, tone = VERDICT_LABELS[verdict]
    channel = entry.channel
    if entry.server_id is None:
        where, channel_label = "direct message", f"DM {channel.discord_id}"
    elif entry.server_id != server.pk:
        # The server it came from is named: this server's admins let it in and answer for it.
        origin = entry.server
        where = f"server {origin.name} ({origin.pk})" if origin is not None else "another server"
        channel_label = "a channel in another server"
    else:
        where = "this server"
        channel_label = f"#{channel.name}" if channel.name else str(channel.discord_id)
        parent = channel.parent
        if parent is not None:
            channel_label += f" (thread of {'#' + parent.name if parent.name else parent.discord_id})"
    return ReviewRow(
        verdict=verdict,
        label=label,
        tone=tone,
        entry=entry,
        where=where,
        channel_label=channel_label,
        age=now - entry.updated_at,
        reveal=entry.server_id == server.pk or verdict == SHOWN,
    )
