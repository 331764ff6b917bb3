"""The sentence for an upload over its size limit, naming the file's real size and its kind (issue 25:
a 2.3 MiB preset sent as a request body used to be reported as "2,097,153 bytes", the part read)."""

from __future__ import annotations

from django.http import HttpRequest

from engine.st_format import ImportRefused, check_size


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
