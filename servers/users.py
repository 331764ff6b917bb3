"""The user types views and services are written against.

`AuthenticatedHttpRequest` is what a `login_required` view receives; a service's `by` is an
`core.actors.Actor`: this user, or an agent (the bot's token, the command line) that is not one.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

__all__ = ["AuthenticatedHttpRequest", "User"]


class AuthenticatedHttpRequest(HttpRequest):
    user: User
    htmx: HtmxDetails  # set by django-htmx's middleware on every request
