"""The served application (config.wsgi, what the web server calls): the bot's API takes a short
middleware stack (API_MIDDLEWARE) and keeps what protects it; the pages keep the whole stack.

The requests go through `config.wsgi.application` itself, not the test client (which always uses
the full stack)."""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import pytest

from config.wsgi import application

pytestmark = pytest.mark.django_db(transaction=True)  # the handler closes its connection after each request


def serve(method: str, path: str, body: bytes = b"", **headers: str) -> tuple[int, dict[str, str], bytes]:
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }
    environ.update(headers)
    answer: dict[str, Any] = {}

    def start_response(status: str, response_headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        answer["status"], answer["headers"] = int(status.split()[0]), dict(response_headers)

    chunks = application(environ, start_response)
    try:
        content = b"".join(chunks)
    finally:
        chunks.close()  # type: ignore[attr-defined]
    return answer["status"], answer["headers"], content


def assemble(server_id: int, token: str, body: bytes, **headers: str) -> tuple[int, dict[str, str], bytes]:
    return serve(
        "POST",
        f"/api/v1/servers/{server_id}/assemble",
        body,
        HTTP_AUTHORIZATION=f"Bearer {token}",
        CONTENT_TYPE="application/json",
        **headers,
    )


def test_the_bots_assemble_call_is_answered_with_the_active_preset_and_the_security_headers(
    stored_preset, api_token, sample_document
):
    status, headers, content = assemble(
        stored_preset.server_id, api_token, json.dumps(sample_document).encode()
    )
    assert status == 200
    assert json.loads(content)["preset"] == stored_preset.name
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert "Content-Security-Policy" in headers
    assert "Set-Cookie" not in headers


def test_an_api_call_naming_a_host_that_is_not_ours_is_refused(stored_preset, api_token, sample_document):
    status, _, _ = assemble(
        stored_preset.server_id, api_token, json.dumps(sample_document).encode(), HTTP_HOST="evil.example"
    )
    assert status == 400


def test_an_api_call_declaring_a_body_over_the_limit_is_refused_before_it_is_read(stored_preset, api_token):
    status, _, content = assemble(
        stored_preset.server_id, api_token, b"{}", CONTENT_LENGTH=str(100 * 1024 * 1024)
    )
    assert status == 413
    assert "larger than" in json.loads(content)["error"]


def test_an_api_call_without_a_token_is_refused(stored_preset, sample_document):
    status, _, _ = serve(
        "POST",
        f"/api/v1/servers/{stored_preset.server_id}/assemble",
        json.dumps(sample_document).encode(),
        CONTENT_TYPE="application/json",
    )
    assert status == 401


def test_a_page_form_posted_without_its_csrf_token_is_still_refused(alice):
    status, _, _ = serve(
        "POST",
        "/login/",
        b"username=alice&password=correct+horse+battery",
        CONTENT_TYPE="application/x-www-form-urlencoded",
    )
    assert status == 403
