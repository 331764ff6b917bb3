"""Playwright in Debian's Chromium against the live test server.

Browsers are never downloaded: we launch /usr/bin/chromium (installed by `make test`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from devtools.chromium import CHROMIUM, CHROMIUM_ARGS

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server, settings) -> Iterator[object]:
    """A fresh browser page. Dialogs are recorded in `page.dialogs` and dismissed (XSS tests assert none)."""
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    # A test clicks far faster than a person, on a loaded machine: room in the server's CPU meter so
    # a long walk is not told "busy" (the share itself is tested in tests/scaling/test_server_share.py).
    settings.SERVER_CPU_SHARE = 4.0
    settings.SERVER_CPU_BURST_SECONDS = 10.0
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.dialogs = []
    page.console_errors = []

    def on_dialog(dialog) -> None:
        page.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("console", lambda msg: msg.type == "error" and page.console_errors.append(msg.text))
    yield page
    context.close()


def sign_in(page, username: str, password: str = "correct horse battery") -> None:
    """Sign in through the real login form."""
    page.goto("/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")


def wait_for_htmx(page) -> None:
    """Wait until htmx has no request in flight and the DOM has settled."""
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")
