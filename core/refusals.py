"""A refusal shown on a page: the one sentence as the page's error message (docs/architecture.md,
"Errors"). Views catch `core.errors.REFUSALS` and hand the error here, or put its `message` in the
form or panel they render again."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest

from core.errors import UserError
from engine import EngineError


def show_refusal(request: HttpRequest, exc: UserError | EngineError) -> None:
    """The refusal as an error message on the next page the user sees."""
    messages.error(request, exc.message)


def refusal_status(exc: UserError | EngineError) -> int:
    """The status a page answers a refusal with when it renders it in place: the error's own (a
    file too large is 413), else 400."""
    return int(getattr(exc, "status", 400))
