"""Project-wide middleware: security headers and the maintenance page."""

import logging
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

log = logging.getLogger(__name__)


class SecurityHeadersMiddleware:
    """Adds the Content-Security-Policy: no inline scripts or styles anywhere."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response


class MaintenanceMiddleware:
    """When the database is unreachable, pages answer 503 with a plain maintenance page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            return self.get_response(request)
        except (OperationalError, InterfaceError) as exc:
            return self._unavailable(request, exc)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if isinstance(exc, (OperationalError, InterfaceError)) or (
            isinstance(exc, DatabaseError) and "connection" in str(exc).lower()
        ):
            return self._unavailable(request, exc)
        return None

    def _unavailable(self, request: HttpRequest, exc: Exception) -> HttpResponse:
        log.warning("database unavailable while serving %s: %s", request.path, exc)
        if request.path.startswith("/api/"):
            return JsonResponse(
                {"error": "The service is briefly unavailable; try again shortly."}, status=503
            )
        html = render_to_string("503.html")
        return HttpResponse(html, status=503, headers={"Retry-After": "30"})
