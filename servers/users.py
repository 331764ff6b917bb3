"""The user types views and services are written against.

`AuthenticatedHttpRequest` is what a `login_required` view receives; `by: User | None` in a service is
the acting dashboard user, or None for the bot and the command line (their `actor_label` says who).
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

__all__ = ["AuthenticatedHttpRequest", "User"]


class AuthenticatedHttpRequest(HttpRequest):
    user: User
    htmx: HtmxDetails  # set by django-htmx's middleware on every request
