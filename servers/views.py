"""Dashboard pages every role shares: sign-in, the server list, a server's home, tokens and audit."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from core import login_throttle
from core.errors import REFUSALS
from core.refusals import show_refusal

from . import selectors, services
from .confirm import Confirmation, ask_first
from .models import Server
from .permissions import Action, get_server_for, role_of, servers_for, user_can
from .status import server_status
from .users import AuthenticatedHttpRequest


class ThrottledAuthenticationForm(AuthenticationForm):
    def clean(self) -> dict[str, Any]:
        request = self.request
        assert request is not None  # the sign-in view always passes it
        username = self.data.get("username", "")
        if login_throttle.is_locked_out(request, username):
            raise self.get_invalid_login_error().__class__(
                "Too many failed sign-ins. Wait 15 minutes and try again.", code="throttled"
            )
        try:
            cleaned = super().clean()
        except Exception:
            login_throttle.note_failure(request, username)
            raise
        login_throttle.note_success(request, username)
        return cleaned


class LoginView(auth_views.LoginView):
    authentication_form = ThrottledAuthenticationForm
    redirect_authenticated_user = True


@login_required
def home(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(request, "servers/home.html", {"servers": servers_for(request.user)})


@login_required
def server_home(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_SERVER)
    can = {action.value: user_can(request.user, server, action) for action in Action}
    context = {
        "server": server,
        "can": can,
        "status": server_status(server),
        "role": role_of(request.user, server),
        "token_encodings": Server._meta.get_field("token_encoding").choices,
        "names": selectors.directory_names(server.pk),
    }
    return render(request, "servers/server.html", context)


@login_required
@require_POST
def tokenizer(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_SAMPLING)
    try:
        services.server_tokenizer_set(
            server=server, encoding=request.POST.get("encoding", ""), by=request.user
        )
    except REFUSALS as exc:
        show_refusal(request, exc)
    else:
        messages.success(request, "Tokenizer updated.")
    return redirect("servers:server", server_id=server.pk)


@login_required
@vary_on_headers("HX-Request")
@require_http_methods(["GET", "POST"])
def tokens(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_TOKENS)
    new_token = None
    if request.method == "POST":
        _, new_token = services.api_token_create(
            server=server, name=request.POST.get("name", ""), by=request.user
        )
        messages.success(request, "Token created. Copy it now: it will not be shown again.")
    context = {"server": server, "tokens": selectors.tokens_for(server), "new_token": new_token}
    if request.htmx:
        return render(request, "servers/tokens.html#token-panel", context)
    return render(request, "servers/tokens.html", context)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def token_revoke(request: AuthenticatedHttpRequest, server_id: int, token_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_TOKENS)
    token = get_object_or_404(server.api_tokens, pk=token_id)
    asked = ask_first(
        request,
        Confirmation(
            question=f"Revoke the token “{token.name}”?",
            button="Revoke the token",
            back=reverse("servers:tokens", args=[server.id]),
            affects=[
                "A bot using it loses access at once; a revoked token cannot be brought back (make a new one)."
            ],
        ),
    )
    if asked:
        return asked
    services.api_token_revoke(token=token, by=request.user)
    if request.htmx:
        context = {"server": server, "tokens": selectors.tokens_for(server), "new_token": None}
        return render(request, "servers/tokens.html#token-panel", context)
    messages.success(request, f"Token {token.name} revoked.")
    return redirect("servers:tokens", server_id=server.id)


@login_required
def audit(request: AuthenticatedHttpRequest, server_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_AUDIT)
    context = {
        "server": server,
        "events": selectors.audit_for(server),
        "names": selectors.directory_names(server.pk),
    }
    return render(request, "servers/audit.html", context)
