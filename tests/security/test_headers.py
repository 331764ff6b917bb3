"""CSRF on every state-changing page, a strict CSP with no inline code anywhere, cookie and transport
settings, bounded uploads and the login throttle."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from .html_scan import inline_code
from .routes import PAGES, page_data, route_url

ROOT = Path(__file__).resolve().parents[2]
THREE_MB = 3 * 1024 * 1024


@pytest.fixture
def signed_in(superuser) -> Client:
    client = Client()
    client.force_login(superuser)
    return client


def _get_pages(client: Client, world) -> dict[str, Any]:  # each page's test-client response
    return {name: client.get(route_url(name, world)) for name, methods in PAGES.items() if "GET" in methods}


def test_the_inline_code_finder_sees_each_kind_of_inline_code():
    html = '<p style="x" onclick="y">a</p><script>alert(1)</script><script src="/a.js"></script>'
    assert inline_code(html) == [
        "<p style=…>",
        "<p onclick=…>",
        "<script> without src",
        "inline script body 'alert(1)'",
    ]


def test_no_page_has_inline_scripts_style_attributes_or_event_handlers(signed_in, lantern_world):
    pages = _get_pages(signed_in, lantern_world)
    assert {name: r.status_code for name, r in pages.items() if r.status_code != 200} == {}
    html = {name: r for name, r in pages.items() if r["Content-Type"].startswith("text/html")}
    found = {name: inline_code(r.content.decode()) for name, r in html.items()}
    assert {name: f for name, f in found.items() if f} == {}


def test_error_pages_and_the_login_page_have_no_inline_code_either(carol, charlie, lantern_world):
    anonymous = Client()
    carol_client, charlie_client = Client(), Client()
    carol_client.force_login(carol)
    charlie_client.force_login(charlie)
    responses = {
        "login": anonymous.get(reverse("login")),
        "403": carol_client.get(reverse("servers:tokens", args=[lantern_world.server.pk])),
        "404": charlie_client.get(reverse("presets:list", args=[lantern_world.server.pk])),
    }
    assert {k: r.status_code for k, r in responses.items()} == {"login": 200, "403": 403, "404": 404}
    assert {
        k: inline_code(r.content.decode()) for k, r in responses.items() if inline_code(r.content.decode())
    } == {}


def test_every_page_sends_a_csp_without_unsafe_inline_or_eval(signed_in, lantern_world):
    for name, response in _get_pages(signed_in, lantern_world).items():
        policy = response.headers.get("Content-Security-Policy", "")
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
        assert "'self'" in directives.get("script-src", ""), name
        assert "unsafe" not in directives.get("script-src", "") + directives.get("style-src", ""), name
        assert directives.get("object-src") == "'none'", name
        assert directives.get("frame-ancestors") == "'none'", name


def test_every_state_changing_page_refuses_a_post_without_a_csrf_token(superuser, lantern_world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(superuser)
    posts = [name for name, methods in PAGES.items() if "POST" in methods]
    answers = {
        name: client.post(route_url(name, lantern_world), page_data(name, lantern_world)).status_code
        for name in posts
    }
    assert answers == dict.fromkeys(posts, 403)
    assert len(posts) >= 27  # the matrix lists every POST view; a shrinking list is a mistake


def test_the_login_form_refuses_a_post_without_a_csrf_token(alice):
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("login"), {"username": "alice", "password": "correct horse battery"})
    assert response.status_code == 403


def _settings_with(debug: str) -> dict[str, Any]:
    code = (
        "import json, django; django.setup(); from django.conf import settings as s; "
        "print(json.dumps({k: getattr(s, k) for k in ('SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', "
        "'SESSION_COOKIE_HTTPONLY', 'SECURE_HSTS_SECONDS', 'SECURE_HSTS_INCLUDE_SUBDOMAINS', "
        "'SECURE_CONTENT_TYPE_NOSNIFF', 'X_FRAME_OPTIONS')}))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": debug}
    for key in ("SECURE_HTTPS", "SECURE_HSTS_SECONDS"):
        env.pop(key, None)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_with_debug_off_cookies_are_secure_and_hsts_lasts_a_year():
    values = _settings_with("0")
    assert values["SESSION_COOKIE_SECURE"] is True
    assert values["CSRF_COOKIE_SECURE"] is True
    assert values["SESSION_COOKIE_HTTPONLY"] is True
    assert values["SECURE_HSTS_SECONDS"] >= 31536000
    assert values["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True
    assert values["X_FRAME_OPTIONS"] == "DENY"


def test_with_debug_on_cookies_work_over_plain_http_and_there_is_no_hsts():
    values = _settings_with("1")
    assert values["SESSION_COOKIE_SECURE"] is False
    assert values["SECURE_HSTS_SECONDS"] == 0


class CountingStream(io.RawIOBase):
    """A request body of `size` bytes that records how much of it the server read."""

    def __init__(self, size: int, chunk: bytes = b"x") -> None:
        self.size = size
        self.read_bytes = 0
        self.chunk = chunk

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        left = self.size - self.read_bytes
        n = left if n is None or n < 0 else min(n, left)
        self.read_bytes += n
        return self.chunk * n

    def readline(self, *args: object) -> bytes:
        return self.read(args[0] if args else 65536)  # type: ignore[arg-type]


def _post_unread(
    client: Client, url: str, size: int, content_type: str, **extra: Any
) -> tuple[int, int, bytes]:
    """POST a body of `size` bytes that is never built in memory; (status, bytes read, response body)."""
    stream = CountingStream(size)
    environ: dict[str, Any] = {
        "wsgi.input": stream,
        "CONTENT_LENGTH": str(size),
        "CONTENT_TYPE": content_type,
    }
    response = client.generic("POST", url, b"", **environ, **extra)
    return response.status_code, stream.read_bytes, response.content


def test_a_3_mb_upload_to_the_upload_page_gets_413_without_being_read(alice, lantern):
    # CSRF checks on, as in production: CsrfViewMiddleware reads the whole form to find its token,
    # so the limit must be enforced before it runs (config.middleware.BodySizeLimitMiddleware).
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    url = reverse("presets:upload", args=[lantern.pk])
    client.get(url)
    status, read, body = _post_unread(
        client,
        url,
        THREE_MB,
        "multipart/form-data; boundary=xyz",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert status == 413
    assert read == 0
    assert b"larger than" in body


def test_a_body_over_the_global_limit_is_refused_unread_on_any_page(alice, lantern, settings):
    settings.MAX_REQUEST_BYTES = 1024 * 1024
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    url = reverse("conversations:conversation-import", args=[lantern.pk])
    client.get(reverse("conversations:conversations", args=[lantern.pk]))
    status, read, _ = _post_unread(
        client,
        url,
        2 * 1024 * 1024,
        "multipart/form-data; boundary=xyz",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert (status, read) == (413, 0)


def test_a_3_mb_preset_to_the_api_gets_413_without_being_read(lantern, api_token):
    status, read, body = _post_unread(
        Client(),
        reverse("presets:api-list", args=[lantern.pk]),
        THREE_MB,
        "application/json",
        HTTP_AUTHORIZATION=f"Bearer {api_token}",
    )
    assert (status, read) == (413, 0)
    # the file's real size and kind (issue 25), not only the limit
    assert json.loads(body)["error"] == "This file is 3.0 MiB, over the 2.0 MiB limit for a preset."


@pytest.mark.parametrize(
    ("route", "file_limit", "api"),
    [
        ("presets:upload", "PRESET_MAX_BYTES", False),
        ("lorebooks:upload", "LOREBOOK_MAX_BYTES", False),
        ("lorebooks:api-list", "LOREBOOK_MAX_BYTES", True),
        ("characters:upload", None, False),
    ],
)
def test_each_upload_address_takes_its_file_limit_and_the_forms_room_and_refuses_a_byte_more_unread(
    route, file_limit, api, alice, lantern, api_token, settings
):
    from engine.cards import MAX_CARD_BYTES

    if file_limit is not None:
        setattr(settings, file_limit, 200_000)
    limit = (200_000 if file_limit is not None else MAX_CARD_BYTES) + 64 * 1024
    client = Client()
    extra = {"HTTP_AUTHORIZATION": f"Bearer {api_token}"} if api else {}
    if not api:
        client.force_login(alice)
    url = reverse(route, args=[lantern.pk])
    content_type = "multipart/form-data; boundary=xyz"
    over_status, over_read, over_body = _post_unread(client, url, limit + 1, content_type, **extra)
    assert (over_status, over_read) == (413, 0)
    assert b"this address accepts" in over_body
    _status, _read, at_body = _post_unread(client, url, limit, content_type, **extra)
    assert b"this address accepts" not in at_body  # the view reads it and answers for itself


def test_an_oversized_assemble_body_gets_413_without_being_read(lantern, api_token, settings):
    settings.ASSEMBLE_MAX_BYTES = 2 * 1024 * 1024
    status, read, _ = _post_unread(
        Client(),
        reverse("assembly:api-assemble", args=[lantern.pk]),
        THREE_MB,
        "application/json",
        HTTP_AUTHORIZATION=f"Bearer {api_token}",
    )
    assert (status, read) == (413, 0)


def test_a_chat_file_over_the_8_mib_limit_is_refused_with_a_clear_message(alice, lantern):
    client = Client()
    client.force_login(alice)
    url = reverse("conversations:conversation-import", args=[lantern.pk])
    from django.core.files.uploadedfile import SimpleUploadedFile

    big = SimpleUploadedFile("big.jsonl", b"{}\n" * (3 * 1024 * 1024 + 1), "application/jsonl")
    response = client.post(url, {"chat": big})
    assert response.status_code == 413
    assert b"larger than" in response.content


def test_after_ten_failed_sign_ins_even_the_right_password_is_refused_for_a_while(alice, settings):
    settings.LOGIN_ATTEMPTS_PER_15_MINUTES = 10
    client = Client()
    for _ in range(10):
        assert client.post(reverse("login"), {"username": "alice", "password": "wrong"}).status_code == 200
    response = client.post(reverse("login"), {"username": "alice", "password": "correct horse battery"})
    assert response.status_code == 200
    assert b"Too many failed sign-ins" in response.content
    assert "_auth_user_id" not in client.session


def test_below_the_limit_the_right_password_still_signs_in(alice, settings):
    settings.LOGIN_ATTEMPTS_PER_15_MINUTES = 10
    client = Client()
    for _ in range(9):
        client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    response = client.post(reverse("login"), {"username": "alice", "password": "correct horse battery"})
    assert response.status_code == 302
