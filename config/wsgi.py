"""The WSGI application. The bot's API (paths under /api/) goes through a handler with the short
API_MIDDLEWARE stack; every other address through the full MIDDLEWARE one. Both are Django's own
handler, so URL resolution, signals and error answers are the same."""

import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# How long a thread may hold the interpreter before another runnable thread gets it (Python's
# default: 5 ms). A short bot request waiting behind a long dashboard render waits about this long
# at each hand-over; see docs/reliability.md §5c.
if os.environ.get("GIL_SWITCH_INTERVAL_MS"):
    sys.setswitchinterval(float(os.environ["GIL_SWITCH_INTERVAL_MS"]) / 1000)
pages = get_wsgi_application()  # sets Django up


class ApiHandler(WSGIHandler):
    """Django's WSGI handler built with settings.API_MIDDLEWARE instead of settings.MIDDLEWARE."""

    def load_middleware(self, is_async: bool = False) -> None:
        # Django builds the chain from settings.MIDDLEWARE; it is swapped only while this handler
        # is made, once, at import (before any request is served).
        full = settings.MIDDLEWARE
        settings.MIDDLEWARE = settings.API_MIDDLEWARE
        try:
            super().load_middleware(is_async)
        finally:
            settings.MIDDLEWARE = full


api = ApiHandler()


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    if environ.get("PATH_INFO", "").startswith("/api/"):
        return api(environ, start_response)
    return pages(environ, start_response)
