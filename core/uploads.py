"""Upload size limits: the sentence for an upload over its limit, naming the file's real size and its
kind (issue 25: a 2.3 MiB preset sent as a request body used to be reported as "2,097,153 bytes", the
part read), and the body limit an upload view declares with `@body_limit` (config.middleware's
BodySizeLimitMiddleware answers 413 above it, before anything reads the body)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.http import HttpRequest

from engine.st_format import ImportRefused, check_size

# A multipart body carries a little more than the file: the boundary lines and the other fields.
MULTIPART_SLACK_BYTES = 64 * 1024

# The file's limit in bytes, or a function giving it (read per request, so a setting can change it).
FileLimit = int | Callable[[], int]
View = TypeVar("View", bound=Callable[..., Any])

_LIMIT_ATTRIBUTE = "tavernkeep_file_limit"


def upload_body_bytes(file_bytes: int) -> int:
    """The largest request body an upload of at most `file_bytes` can need (the file and the slack)."""
    return file_bytes + MULTIPART_SLACK_BYTES


def body_limit(file_bytes: FileLimit) -> Callable[[View], View]:
    """Declare the largest file a view accepts: its request body may be that and the multipart slack.
    Put it outermost (above login_required and the rest): the middleware reads it from the view the
    URL resolves to."""

    def declare(view: View) -> View:
        setattr(view, _LIMIT_ATTRIBUTE, file_bytes)
        return view

    return declare


def declared_body_limit(view: Callable[..., Any]) -> int | None:
    """The request body limit a view declared with `@body_limit`, in bytes; None when it declared none."""
    file_bytes: FileLimit | None = getattr(view, _LIMIT_ATTRIBUTE, None)
    if file_bytes is None:
        return None
    return upload_body_bytes(file_bytes() if callable(file_bytes) else file_bytes)


def declared_size(request: HttpRequest) -> int | None:
    """The body's size as the client declared it (Content-Length), or None."""
    length = request.headers.get("Content-Length", "")
    return int(length) if length.isdigit() else None


def too_large(size: int | None, *, limit: int, what: str) -> str:
    """ "This file is 2.3 MiB, over the 2.0 MiB limit for a preset." — or, when the size is not
    known, the limit alone."""
    if size is not None and size > limit:
        try:
            check_size(size, limit, what=what)
        except ImportRefused as exc:
            return exc.message
    return f"This file is over the {limit / (1024 * 1024):.1f} MiB limit for a {what}."
