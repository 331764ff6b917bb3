"""Project-wide middleware: the health check, JSON errors under /api/, security headers, body limits,
the maintenance page and htmx messages."""

import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.db import DatabaseError, InterfaceError, OperationalError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from core.uploads import declared_body_limit
from engine import UNSTORABLE_CHAR

log = logging.getLogger(__name__)


class HealthCheckMiddleware:
    """`GET /healthz` for load balancers and container healthchecks: 200 when this process reaches the database.

    Answered before host validation, sessions and authentication, so a probe needs no Host header or
    cookie. The cache is reported but never makes the process unhealthy: Redis is an accelerator
    (core.resilient_cache), and the database answers without it.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path != "/healthz":
            return self.get_response(request)
        report = {"database": "ok", "cache": "ok"}
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        except DatabaseError:
            report["database"] = "unreachable"
        try:
            cache.get("healthz")
        except Exception:  # any cache backend error: reported, not fatal
            report["cache"] = "unreachable"
        response = JsonResponse(report, status=200 if report["database"] == "ok" else 503)
        response.headers["Cache-Control"] = "no-store"
        return response


class ApiJsonErrorsMiddleware:
    """Under /api/ every error is JSON `{"error": sentence}` with its status (docs/bot.md): an unknown
    address, a trailing slash, a method the address does not take, a refused Host header or a crash
    otherwise answer Django's HTML page (or an empty body), on which a bot's JSON decoding dies."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code < 400 or not request.path.startswith("/api/"):
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        answer = JsonResponse({"error": api_error_sentence(request, response)}, status=response.status_code)
        for header in ("Allow", "Retry-After"):
            if header in response.headers:
                answer.headers[header] = response.headers[header]
        return answer


def api_error_sentence(request: HttpRequest, response: HttpResponse) -> str:
    """One sentence for an error the API's own views did not word."""
    status, path = response.status_code, request.path
    if status == 404:
        if path.endswith("/") and len(path) > len("/api/"):
            return f"No such API address: {path}. API addresses have no trailing slash: {path.rstrip('/')}."
        return f"No such API address: {path}. The addresses are listed in docs/bot.md."
    if status == 405:
        allowed = response.headers.get("Allow", "")
        return f"{path} does not take {request.method}; use {allowed or 'another method'}."
    if status >= 500:
        return (
            "The server failed on this request; it has been logged. Try again, or tell the server's admins."
        )
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    return f"The request was refused ({status} {phrase})."


class SecurityHeadersMiddleware:
    """Adds the Content-Security-Policy: no inline scripts or styles anywhere."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response


class BodySizeLimitMiddleware:
    """Answers 413 to a request whose declared body is larger than its view accepts, before it is read.

    CsrfViewMiddleware reads the whole form (multipart files included) to find its token, so a view's
    own size check comes after the read; this runs before it. An upload view declares its limit with
    `@body_limit` (servers/uploads.py); others get MAX_REQUEST_BYTES.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view_func: Callable[..., HttpResponse], view_args: Any, view_kwargs: Any
    ) -> HttpResponse | None:
        limit = declared_body_limit(view_func) or settings.MAX_REQUEST_BYTES
        length = request.headers.get("Content-Length", "")
        if not (length.isdigit() and int(length) > limit):
            return None
        message = f"The request body is larger than the {limit / (1024 * 1024):.1f} MiB this address accepts."
        if request.path.startswith("/api/"):
            return JsonResponse({"error": message}, status=413)
        return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")


class UnstorableTextMiddleware:
    """Answers 400 to a request whose address, query or form spells NUL or a lone surrogate
    (docs/reliability.md, "Text no column can store").

    PostgreSQL refuses NUL in a text value, and no encoder writes a lone surrogate, so such a value
    reaching a query or a page would be a 500. A form's own field check (Django's CharField) covers
    only the forms that use one; this covers every view before it runs. JSON bodies are checked
    where they are decoded (`decode_json`), naming the JSON field.
    """

    FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view_func: Callable[..., HttpResponse], view_args: Any, view_kwargs: Any
    ) -> HttpResponse | None:
        where = unstorable_part(request)
        if where is None:
            return None
        message = f"{where} contains a NUL character or a lone surrogate, which cannot be stored as text."
        if request.path.startswith("/api/"):
            return JsonResponse({"error": message}, status=400)
        return HttpResponse(render_to_string("400.html", {"message": message}), status=400)


def unstorable_part(request: HttpRequest) -> str | None:
    """Which part of the request (address, query parameter, form field) holds NUL or a lone
    surrogate, as the start of a sentence; None when none does. Called after the body-size check,
    so a form read here is one the view would read anyway."""
    if UNSTORABLE_CHAR.search(request.path_info):
        return "The address"
    for key, values in request.GET.lists():
        if UNSTORABLE_CHAR.search(key) or any(UNSTORABLE_CHAR.search(value) for value in values):
            return f"The query parameter `{_printable(key)}`"
    if request.method != "POST" or request.content_type not in UnstorableTextMiddleware.FORM_TYPES:
        return None
    for key, values in request.POST.lists():
        if UNSTORABLE_CHAR.search(key) or any(UNSTORABLE_CHAR.search(value) for value in values):
            return f"The form field `{_printable(key)}`"
    return None


def _printable(name: str) -> str:
    return UNSTORABLE_CHAR.sub("?", name)[:100]


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


class HtmxMessagesMiddleware:
    """Shows the messages queued during an htmx request in the page's #flash box (an out-of-band
    swap appended to the partial), so they are consumed now instead of surfacing on a later page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not getattr(request, "htmx", False) or response.status_code != 200 or response.streaming:
            return response
        if "HX-Redirect" in response.headers or "HX-Location" in response.headers:
            return response  # the next page shows them
        if not response.get("Content-Type", "").startswith("text/html"):
            return response
        queued = list(messages.get_messages(request))
        if queued:
            flash = render_to_string("messages.html", {"messages": queued}, request=request)
            response.content += f'<div hx-swap-oob="innerHTML:#flash">{flash}</div>'.encode()
        return response
