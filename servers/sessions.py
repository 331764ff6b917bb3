"""At most SESSIONS_PER_ACCOUNT dashboard sessions per account (docs/reliability.md, "The
dashboard's fair share"): each sign-in is recorded, and the account's oldest sessions beyond the
bound are ended. A browser's page requests are metered per session cookie (core/client_rate.py);
without this bound an account signed in thirty times had thirty cookies' worth of requests."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.db import transaction
from django.http import HttpRequest

from .models import AccountSession


def sessions_per_account() -> int:
    return max(1, int(getattr(settings, "SESSIONS_PER_ACCOUNT", 5)))


def note_sign_in(sender: Any, request: HttpRequest, user: Any, **kwargs: Any) -> None:
    """Record the new session and end the account's oldest beyond the bound."""
    key = request.session.session_key
    if not key:
        request.session.save()
        key = request.session.session_key
    store = import_module(settings.SESSION_ENGINE).SessionStore
    with transaction.atomic():
        AccountSession.objects.update_or_create(session_key=key, defaults={"user": user})
        kept = AccountSession.objects.filter(user=user).order_by("-created_at", "-id")
        ended = list(kept.values_list("session_key", flat=True)[sessions_per_account() :])
        AccountSession.objects.filter(session_key__in=ended).delete()
    for old in ended:
        store(session_key=old).delete()


def connect() -> None:
    user_logged_in.connect(note_sign_in, dispatch_uid="servers.sessions.note_sign_in")
