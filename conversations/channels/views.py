"""The pages of the stored channel conversations (docs/channels.md#pages): the list with the server's
rules, one channel's messages with their ops and variables, and the forget forms.

Reading needs `Action.REVIEW_STM` (every role); forgetting `Action.FORGET_CHANNELS` (every role);
the rules `Action.MANAGE_PRIVACY` (admin, moderator). Every write is a POST form with CSRF that
asks first (a required confirmation box) and redirects, without JavaScript.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from core.errors import REFUSALS
from core.refusals import show_refusal
from engine.macros import to_text
from servers import selectors as server_selectors
from servers.permissions import Action, get_server_for, user_can
from servers.snowflakes import snowflake_or_none
from servers.users import AuthenticatedHttpRequest

from . import selectors, services


@login_required
@vary_on_headers("HX-Request")
@require_GET
def channel_list(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.REVIEW_STM)
    names = server_selectors.directory_names(server.pk)
    conversations = list(selectors.conversations_of(server.pk).order_by("-updated_at", "id")[:500])
    known = server_selectors.channels_by_id(server.pk, [c.channel_id for c in conversations])
    parents = {i: row.parent.discord_id for i, row in known.items() if row.parent is not None}
    rows = [
        (c, names.channel(c.channel_id), parents.get(c.channel_id), names.channel(parents.get(c.channel_id)))
        for c in conversations
    ]
    return render(
        request,
        "conversations/channels.html",
        {
            "server": server,
            "rows": rows,
            "rules": selectors.channel_settings(server.pk),
            "can_manage": user_can(request.user, server, Action.MANAGE_PRIVACY),
            "can_forget": user_can(request.user, server, Action.FORGET_CHANNELS),
            "members": sorted(names.members.items(), key=lambda item: item[1].lower()),
            "forgotten": selectors.forget_records(server.pk, limit=20),
        },
    )


@login_required
@vary_on_headers("HX-Request")
@require_GET
def channel_detail(request: AuthenticatedHttpRequest, server_id: int, channel_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.REVIEW_STM)
    conversation = selectors.conversation_for(server.pk, channel_id)
    if conversation is None:
        raise Http404("This server stores no conversation for that channel.")
    names = server_selectors.directory_names(server.pk)
    parent_id = server_selectors.channel_parent(server.pk, conversation.channel_id)
    rows = selectors.message_rows(conversation)
    authors = {
        row.message.author_id: names.member(row.message.author_id) or row.author
        for row in rows
        if row.role == "user" and row.message.author_id
    }
    return render(
        request,
        "conversations/channel.html",
        {
            "server": server,
            "conversation": conversation,
            "channel_name": names.channel(conversation.channel_id),
            "parent_id": parent_id,
            "parent_name": names.channel(parent_id),
            "rows": [(row, names.member(row.message.author_id) or row.author) for row in rows],
            "variables": sorted(
                (key, to_text(value)) for key, value in (conversation.variables or {}).items()
            ),
            "authors": sorted(authors.items(), key=lambda item: item[1].lower()),
            "forgotten": selectors.forget_records(server.pk, conversation.channel_id),
            "can_forget": user_can(request.user, server, Action.FORGET_CHANNELS),
        },
    )


def _confirmed(request: AuthenticatedHttpRequest) -> bool:
    if request.POST.get("confirm") == "yes":
        return True
    messages.error(request, "Tick the box to confirm: forgetting cannot be undone.")
    return False


@login_required
@require_POST
def channel_forget(request: AuthenticatedHttpRequest, server_id: int, channel_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.FORGET_CHANNELS)
    if selectors.conversation_for(server.pk, channel_id) is None:
        raise Http404("This server stores no conversation for that channel.")
    if not _confirmed(request):
        return redirect("conversations:channel", server_id=server.pk, channel_id=channel_id)
    count = services.conversation_forget(server_id=server.pk, channel_id=channel_id, by=request.user)
    messages.success(request, f"Forgot the channel and its {count} stored messages.")
    return redirect("conversations:channels", server_id=server.pk)


@login_required
@require_POST
def member_forget(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.FORGET_CHANNELS)
    user_id = snowflake_or_none(request.POST.get("member", "").strip())
    back = request.POST.get("back", "")
    target = (
        redirect("conversations:channel", server_id=server.pk, channel_id=int(back))
        if back.isdigit() and selectors.conversation_for(server.pk, int(back)) is not None
        else redirect("conversations:channels", server_id=server.pk)
    )
    if user_id is None:
        messages.error(request, "Choose a member, or give their Discord id.")
        return target
    if not _confirmed(request):
        return target
    count, channels = services.member_forget(server_id=server.pk, user_id=user_id, by=request.user)
    messages.success(request, f"Forgot {count} messages of that member in {len(channels)} channels.")
    if back.isdigit() and selectors.conversation_for(server.pk, int(back)) is None:
        return redirect("conversations:channels", server_id=server.pk)
    return target


@login_required
@require_POST
def channel_rules(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRIVACY)
    try:
        keep_messages = int(request.POST.get("keep_messages", ""))
        keep_days = int(request.POST.get("keep_days", ""))
    except ValueError:
        messages.error(request, "Give the messages kept per channel and the days kept as whole numbers.")
        return redirect("conversations:channels", server_id=server.pk)
    try:
        services.settings_set(
            server=server,
            user_writes=request.POST.get("user_writes") == "on",
            keep_messages=keep_messages,
            keep_days=keep_days,
            by=request.user,
        )
    except REFUSALS as error:
        show_refusal(request, error)
    else:
        messages.success(request, "Saved the channel rules.")
    return redirect("conversations:channels", server_id=server.pk)
