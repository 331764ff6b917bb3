"""Sample conversation pages: the list, one thread with its op panels (docs/conversations.md).

Reading needs Action.VIEW_PREVIEW, changing needs Action.EDIT_SAMPLES. Every change is a POST that
answers htmx with the re-rendered thread (later messages' states depend on earlier ones) and plain
browsers with a redirect back to the message.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from core.errors import REFUSALS
from core.refusals import show_refusal
from engine.macros import WRITE_OPS, Op, make_op
from servers.confirm import Confirmation, ask_first
from servers.models import Server
from servers.permissions import Action, get_server_for, user_can
from servers.users import AuthenticatedHttpRequest

from . import selectors, services
from .models import ConversationMessage, MessageRole, SampleConversation, Swipe
from .st_chat import MAX_CHAT_BYTES

MAX_OP_ROWS = services.MAX_OPS + 1
WINDOW = 100  # messages shown by default: the latest ones (a long chat's page stays light)


@login_required
@vary_on_headers("HX-Request")
@require_http_methods(["GET", "POST"])
def conversation_list(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    if request.method == "POST":
        server = get_server_for(request.user, server_id, needs=Action.EDIT_SAMPLES)
        try:
            conversation = services.conversation_create(
                server=server, name=request.POST.get("name", ""), by=request.user
            )
        except REFUSALS as error:
            show_refusal(request, error)
            return redirect("conversations:conversations", server_id=server.id)
        return redirect("conversations:conversation", server_id=server.id, conversation_id=conversation.id)
    server = get_server_for(request.user, server_id, needs=Action.VIEW_PREVIEW)
    context = {
        "server": server,
        "conversations": selectors.conversations_for(server),
        "can_edit": user_can(request.user, server, Action.EDIT_SAMPLES),
    }
    return render(request, "conversations/list.html", context)


@login_required
@require_POST
def conversation_import(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.EDIT_SAMPLES)
    upload = request.FILES.get("chat")
    if upload is None:
        messages.error(request, "Choose a SillyTavern chat file (.jsonl) to import.")
        return redirect("conversations:conversations", server_id=server.id)
    if upload.size and upload.size > MAX_CHAT_BYTES:
        messages.error(request, f"The chat file is larger than {MAX_CHAT_BYTES // (1024 * 1024)} MiB.")
        return redirect("conversations:conversations", server_id=server.id)
    name = request.POST.get("name", "").strip() or (upload.name or "").removesuffix(".jsonl")
    try:
        conversation, warnings = services.conversation_import(
            server=server, name=name, data=upload.read(MAX_CHAT_BYTES + 1), by=request.user
        )
    except REFUSALS as error:
        show_refusal(request, error)
        return redirect("conversations:conversations", server_id=server.id)
    messages.success(request, f"Imported {conversation.messages.count()} messages.")
    for warning in warnings[:20]:
        messages.warning(request, warning)
    return redirect("conversations:conversation", server_id=server.id, conversation_id=conversation.id)


@login_required
@vary_on_headers("HX-Request")
def conversation_detail(
    request: AuthenticatedHttpRequest, server_id: int, conversation_id: int
) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.VIEW_PREVIEW)
    conversation = get_object_or_404(SampleConversation, server=server, pk=conversation_id)
    panel = request.GET.get("panel", "")
    context = _thread_context(request, server, conversation, panel=int(panel) if panel.isdigit() else None)
    return render(request, "conversations/detail.html", context)


@login_required
@require_POST
def conversation_rename(
    request: AuthenticatedHttpRequest, server_id: int, conversation_id: int
) -> HttpResponse:
    server, conversation = _editable(request, server_id, conversation_id)
    try:
        services.conversation_rename(
            conversation=conversation, name=request.POST.get("name", ""), by=request.user
        )
    except REFUSALS as error:
        show_refusal(request, error)
    return redirect("conversations:conversation", server_id=server.id, conversation_id=conversation.id)


@login_required
@require_POST
def conversation_delete(
    request: AuthenticatedHttpRequest, server_id: int, conversation_id: int
) -> HttpResponse:
    server, conversation = _editable(request, server_id, conversation_id)
    count = conversation.messages.count()
    asked = ask_first(
        request,
        Confirmation(
            question=f"Delete the conversation “{conversation.name}”?",
            button="Delete the conversation",
            back=reverse("conversations:conversation", args=[server.id, conversation.pk]),
            affects=[
                f"Its {count} message{'s' * (count != 1)}, their swipes and variable changes go with it; "
                "no version keeps a conversation."
            ],
        ),
    )
    if asked:
        return asked
    services.conversation_delete(conversation=conversation, by=request.user)
    messages.success(request, f"Conversation {conversation.name} deleted.")
    return redirect("conversations:conversations", server_id=server.id)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def message_add(request: AuthenticatedHttpRequest, server_id: int, conversation_id: int) -> HttpResponse:
    server, conversation = _editable(request, server_id, conversation_id)
    role = request.POST.get("role", MessageRole.USER)
    try:
        message, warnings = services.message_add(
            conversation=conversation,
            role=role,
            speaker=request.POST.get("speaker", ""),
            text=request.POST.get("text", ""),
            timestamp=_timestamp(request.POST.get("timestamp", "")),
            by=request.user,
        )
    except REFUSALS as error:
        return _changed(request, server, conversation, error=error.message)
    return _changed(request, server, conversation, focus=message.pk, warnings=warnings)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def message_edit(
    request: AuthenticatedHttpRequest, server_id: int, conversation_id: int, message_id: int
) -> HttpResponse:
    return _message_change(
        request,
        server_id,
        conversation_id,
        message_id,
        lambda message: services.message_edit(
            message=message,
            text=request.POST.get("text", ""),
            speaker=request.POST.get("speaker"),
            timestamp=_timestamp(request.POST.get("timestamp", "")),
            by=request.user,
        ),
    )


@login_required
@vary_on_headers("HX-Request")
@require_POST
def message_continue(
    request: AuthenticatedHttpRequest, server_id: int, conversation_id: int, message_id: int
) -> HttpResponse:
    return _message_change(
        request,
        server_id,
        conversation_id,
        message_id,
        lambda message: services.message_continue(
            message=message, text=request.POST.get("text", ""), by=request.user
        ),
    )


@login_required
@vary_on_headers("HX-Request")
@require_POST
def message_delete(
    request: AuthenticatedHttpRequest, server_id: int, conversation_id: int, message_id: int
) -> HttpResponse:
    server, conversation, message = _editable_message(request, server_id, conversation_id, message_id)
    asked = ask_first(
        request,
        Confirmation(
            question=f"Delete message #{message.position} ({message.speaker or message.role}) of “{conversation.name}”?",
            button="Delete the message",
            back=reverse("conversations:conversation", args=[server.id, conversation.pk]),
            affects=[
                "Its swipes and its variable changes go with it: the messages after it see the values from "
                "before it. No version keeps a message."
            ],
        ),
    )
    if asked:
        return asked
    services.message_delete(message=message, by=request.user)
    return _changed(request, server, conversation)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def swipe_add(
    request: AuthenticatedHttpRequest, server_id: int, conversation_id: int, message_id: int
) -> HttpResponse:
    return _message_change(
        request,
        server_id,
        conversation_id,
        message_id,
        lambda message: services.swipe_add(
            message=message, text=request.POST.get("text", ""), by=request.user
        )[1],
    )


@login_required
@vary_on_headers("HX-Request")
@require_POST
def swipe_select(
    request: AuthenticatedHttpRequest, server_id: int, conversation_id: int, message_id: int, swipe_id: int
) -> HttpResponse:
    return _message_change(
        request,
        server_id,
        conversation_id,
        message_id,
        lambda message: services.swipe_select(swipe=_swipe_of(message, swipe_id), by=request.user),
    )


@login_required
@vary_on_headers("HX-Request")
@require_POST
def swipe_delete(
    request: AuthenticatedHttpRequest, server_id: int, conversation_id: int, message_id: int, swipe_id: int
) -> HttpResponse:
    server, conversation, message = _editable_message(request, server_id, conversation_id, message_id)
    swipe = _swipe_of(message, swipe_id)
    number = list(message.swipes.values_list("pk", flat=True)).index(swipe.pk) + 1
    asked = ask_first(
        request,
        Confirmation(
            question=f"Delete swipe {number} of message #{message.position} of “{conversation.name}”?",
            button="Delete the swipe",
            back=reverse("conversations:conversation", args=[server.id, conversation.pk]),
            affects=[
                "Its text and its variable changes go with it"
                + (
                    ": the message shows another swipe, and the messages after it see its values."
                    if swipe.is_current
                    else "."
                )
                + " No version keeps a swipe."
            ],
        ),
    )
    if asked:
        return asked
    return _message_change(
        request,
        server_id,
        conversation_id,
        message_id,
        lambda message: services.swipe_delete(swipe=_swipe_of(message, swipe_id), by=request.user),
    )


@login_required
@vary_on_headers("HX-Request")
@require_POST
def ops_save(
    request: AuthenticatedHttpRequest, server_id: int, conversation_id: int, message_id: int
) -> HttpResponse:
    swipe_id = request.POST.get("swipe", "")
    return _message_change(
        request,
        server_id,
        conversation_id,
        message_id,
        lambda message: services.swipe_set_ops(
            swipe=_swipe_of(message, int(swipe_id) if swipe_id.isdigit() else 0),
            ops=_ops_from_form(request),
            by=request.user,
        ),
        keep_panel_open=True,
    )


def _message_change(
    request: AuthenticatedHttpRequest,
    server_id: int,
    conversation_id: int,
    message_id: int,
    change: Callable[[ConversationMessage], list[str] | None],
    *,
    keep_panel_open: bool = False,
) -> HttpResponse:
    """The shape every change to one message shares: check the role, change, re-render at the message."""
    server, conversation, message = _editable_message(request, server_id, conversation_id, message_id)
    panel = message.pk if keep_panel_open else None
    try:
        warnings = change(message) or []
    except REFUSALS as error:
        return _changed(request, server, conversation, focus=message.pk, error=error.message, panel=panel)
    return _changed(request, server, conversation, focus=message.pk, warnings=warnings, panel=panel)


# -- request reading -----------------------------------------------------------------------------------


def _editable(
    request: AuthenticatedHttpRequest, server_id: int, conversation_id: int
) -> tuple[Server, SampleConversation]:
    server = get_server_for(request.user, server_id, needs=Action.EDIT_SAMPLES)
    return server, get_object_or_404(SampleConversation, server=server, pk=conversation_id)


def _editable_message(
    request: AuthenticatedHttpRequest, server_id: int, conversation_id: int, message_id: int
) -> tuple[Server, SampleConversation, ConversationMessage]:
    server, conversation = _editable(request, server_id, conversation_id)
    return (
        server,
        conversation,
        get_object_or_404(ConversationMessage, conversation=conversation, pk=message_id),
    )


def _swipe_of(message: ConversationMessage, swipe_id: int) -> Swipe:
    return get_object_or_404(Swipe, message=message, pk=swipe_id)


def _timestamp(value: str) -> datetime | None:
    """A datetime-local field's value as an aware UTC datetime; None when empty or unreadable."""
    value = (value or "").strip()
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _ops_from_form(request: AuthenticatedHttpRequest) -> list[Op]:
    """The op panel's rows, in order: `op-N`, `key-N`, `value-N`, `delete-N`; rows without a key are skipped."""
    try:
        rows = min(int(request.POST.get("rows", "0")), MAX_OP_ROWS)
    except ValueError:
        rows = 0
    ops: list[Op] = []
    for index in range(rows):
        key = request.POST.get(f"key-{index}", "").strip()
        if not key or request.POST.get(f"delete-{index}"):
            continue
        ops.append(make_op(request.POST.get(f"op-{index}", ""), key, request.POST.get(f"value-{index}", "")))
    return ops


# -- responses -----------------------------------------------------------------------------------------


def _thread_context(
    request: AuthenticatedHttpRequest,
    server: Server,
    conversation: SampleConversation,
    *,
    panel: int | None = None,
    error: str | None = None,
    warnings: list[str] | None = None,
) -> dict:
    thread = selectors.conversation_thread(conversation)
    shown = thread.messages if _wants_all(request) else thread.messages[-WINDOW:]
    return {
        "server": server,
        "conversation": conversation,
        "thread": thread,
        "shown": shown,
        "hidden_count": len(thread.messages) - len(shown),
        "can_edit": user_can(request.user, server, Action.EDIT_SAMPLES),
        "roles": MessageRole.choices,
        "op_names": WRITE_OPS,
        "open_panel": panel,
        "error": error,
        "extraction_warnings": warnings or [],
    }


def _wants_all(request: AuthenticatedHttpRequest) -> bool:
    """Show every message (`?all=1` on the page, or on the page an htmx request came from)."""
    if request.GET.get("all") == "1":
        return True
    current = request.htmx.current_url if getattr(request, "htmx", None) else None
    return current is not None and "all=1" in urlsplit(current).query.split("&")


def _changed(
    request: AuthenticatedHttpRequest,
    server: Server,
    conversation: SampleConversation,
    *,
    focus: int | None = None,
    panel: int | None = None,
    error: str | None = None,
    warnings: list[str] | None = None,
) -> HttpResponse:
    """htmx: the re-rendered thread; otherwise a redirect back to the page (at the message)."""
    if request.htmx:
        context = _thread_context(request, server, conversation, panel=panel, error=error, warnings=warnings)
        return render(request, "conversations/detail.html#thread", context)
    if error:
        messages.error(request, error)
    for warning in warnings or []:
        messages.warning(request, warning)
    url = reverse(
        "conversations:conversation", kwargs={"server_id": server.id, "conversation_id": conversation.id}
    )
    if panel is not None:
        url += f"?panel={panel}"
    return redirect(f"{url}#m{focus}" if focus else url)
