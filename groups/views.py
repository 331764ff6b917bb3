"""The Groups page (docs/groups.md): every role reads the server's groups; admins create, edit and
delete them, choose a group per channel, and write the members' notes and the channels' Author's
Notes (Action.MANAGE_GROUPS, admins only, as for cards). Every form works without JavaScript
(POST, then redirect)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from characters import selectors as card_selectors
from core.errors import REFUSALS
from core.line_ends import as_typed
from core.refusals import show_refusal
from presets.channels import selectors as channel_selectors  # the channel picker's names
from servers.confirm import Confirmation, ask_first
from servers.models import Server
from servers.permissions import Action, get_server_for, user_can
from servers.users import AuthenticatedHttpRequest

from . import forms, selectors, services
from .models import Group as GroupRow


@login_required
@require_GET
def group_list(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_GROUPS)
    context: dict[str, Any] = {
        "server": server,
        "groups": selectors.groups_page(server),
        "avatars": card_selectors.card_ids_with_avatar(server.pk),
        "can_manage": user_can(request.user, server, Action.MANAGE_GROUPS),
        "known_channels": channel_selectors.known_channels(server),
        "channel_labels": selectors.channel_labels(server),
        "notes": selectors.notes_for(server),
        "authors_notes": selectors.authors_notes_for(server),
    }
    context["note_members"] = sorted(
        {(m["name"], m["card_id"]) for g in context["groups"] for m in g["members"]}, key=lambda pair: pair[0]
    )
    return render(request, "groups/list.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def group_new(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_GROUPS)
    cards, avatars = card_selectors.cards_for(server), card_selectors.card_ids_with_avatar(server.pk)
    if request.method == "GET":
        return _edit_page(request, server, forms.blank_form(cards, avatars), group=None)
    return _save(request, server, forms.read_form(request.POST, cards, avatars), group=None)


@login_required
@require_http_methods(["GET", "POST"])
def group_edit(request: AuthenticatedHttpRequest, server_id: int, group_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_GROUPS)
    group = _group_or_404(server, group_id)
    cards, avatars = card_selectors.cards_for(server), card_selectors.card_ids_with_avatar(server.pk)
    if request.method == "GET":
        form = forms.form_for_group(group, selectors.members_of(group), cards, avatars)
        return _edit_page(request, server, form, group=group)
    form = forms.read_form(request.POST, cards, avatars)
    form.name = group.name  # the name is the group's key for the bot: it stays
    form.join_prefix = as_typed(form.join_prefix, stored=group.join_prefix)
    form.join_suffix = as_typed(form.join_suffix, stored=group.join_suffix)
    return _save(request, server, form, group=group)


@login_required
@require_POST
def group_delete(request: AuthenticatedHttpRequest, server_id: int, group_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_GROUPS)
    group = _group_or_404(server, group_id)
    channels = selectors.channels_using(server.pk).get(group.name, [])
    labels = dict(channel_selectors.known_channels(server)) if channels else {}
    names = [labels.get(channel, f"channel {channel}").strip() for channel in channels]
    affects = ["Its members' notes go with it; the cards stay. No version keeps a group."]
    if names:
        affects.append(f"Channels that use it go back to the server's character: {', '.join(names)}.")
    asked = ask_first(
        request,
        Confirmation(
            question=f"Delete the group “{group.name}”?",
            button="Delete the group",
            back=reverse("groups:edit", args=[server.pk, group.pk]),
            affects=affects,
        ),
    )
    if asked:
        return asked
    services.group_delete(group=group, by=request.user)
    messages.success(request, f"Deleted the group “{group.name}”.")
    return redirect("groups:list", server_id=server.pk)


@login_required
@require_POST
def channel_set(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_GROUPS)
    group_id = str(request.POST.get("group", "")).strip()
    try:
        channel = _posted_channel(request)
        group = None
        if group_id:
            group = _group_or_none(server, group_id)
            if group is None:
                raise services.GroupError("Choose one of this server's groups.")
        services.channel_group_set(server=server, channel_id=channel, group=group, by=request.user)
    except REFUSALS as exc:
        show_refusal(request, exc)
    else:
        where = _channel_words(server, channel).capitalize()
        messages.success(
            request,
            f"{where} now uses the group “{group.name}”."
            if group
            else f"{where} uses the server's character again.",
        )
    return redirect(reverse("groups:list", args=[server.pk]) + "#channels")


@login_required
@require_POST
def member_note_save(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    """Add, edit or clear (empty text) a member's note in one channel."""
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_GROUPS)
    card = str(request.POST.get("card", "")).strip()
    text = str(request.POST.get("text", "")).replace("\r\n", "\n")
    try:
        channel = _posted_channel(request)
        in_groups = (
            selectors.groups_with_card(server.pk, int(card)) if card.isdigit() and len(card) < 20 else []
        )
        if not in_groups:
            raise services.GroupError("Choose a member of one of this server's groups.")
        _, name = services.member_note_set(
            server=server,
            group_name=in_groups[0],
            channel_id=channel,
            member=int(card),
            text=text,
            by=request.user,
        )
    except REFUSALS as exc:
        show_refusal(request, exc)
    else:
        where = _channel_words(server, channel)
        messages.success(
            request,
            f"Saved {name}'s note in {where}." if text.strip() else f"Cleared {name}'s note in {where}.",
        )
    return redirect(reverse("groups:list", args=[server.pk]) + "#notes")


@login_required
@require_POST
def authors_note_save(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    """Write or clear (empty text) a channel's Author's Note."""
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_GROUPS)
    text = str(request.POST.get("text", "")).replace("\r\n", "\n")
    try:
        channel = _posted_channel(request)
        kept = services.authors_note_set(server=server, channel_id=channel, text=text, by=request.user)
    except REFUSALS as exc:
        show_refusal(request, exc)
    else:
        where = _channel_words(server, channel)
        messages.success(
            request,
            f"Saved the Author's Note of {where}." if kept else f"Cleared the Author's Note of {where}.",
        )
    return redirect(reverse("groups:list", args=[server.pk]) + "#authors-notes")


def _posted_channel(request: AuthenticatedHttpRequest) -> int:
    typed = str(request.POST.get("channel", "")).strip()
    if not typed.isdigit() or len(typed) > 20:
        raise services.GroupError(
            f"“{typed[:100]}” is not a channel id: give the channel's id (digits only)."
            if typed
            else "Choose a channel."
        )
    return int(typed)


def _channel_words(server: Server, channel: int) -> str:
    return selectors.channel_labels(server).get(channel) or f"channel {channel}"


def _save(
    request: AuthenticatedHttpRequest, server: Server, form: forms.GroupForm, *, group: GroupRow | None
) -> HttpResponse:
    try:
        if form.unknown_cards:
            raise services.GroupError(
                "A card in the form is not one of this server's cards (deleted, or from another server): "
                "reload the page and choose again."
            )
        saved = services.group_save(
            server=server,
            name=form.name,
            members=form.members,
            muted=form.muted,
            mode=form.mode,
            join_prefix=form.join_prefix,
            join_suffix=form.join_suffix,
            strategy=form.strategy,
            allow_self_responses=form.allow_self_responses,
            replace=group is not None,
            by=request.user,
        )
    except REFUSALS as exc:
        return _edit_page(request, server, form, group=group, error=exc.message, status=400)
    messages.success(request, f"Saved the group “{saved.name}”.")
    return redirect("groups:list", server_id=server.pk)


def _edit_page(
    request: AuthenticatedHttpRequest,
    server: Server,
    form: forms.GroupForm,
    *,
    group: GroupRow | None,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    context = {"server": server, "form": form, "group": group, "error": error}
    return render(request, "groups/edit.html", context, status=status)


def _group_or_404(server: Server, group_id: int) -> GroupRow:
    group = selectors.group_of(server, group_id)
    if group is None:
        raise Http404("No such group on this server.")
    return group


def _group_or_none(server: Server, group_id: str) -> GroupRow | None:
    return selectors.group_of(server, int(group_id)) if group_id.isdigit() and len(group_id) < 20 else None
