"""The preview page in a real browser: carol edits the sample and sees the preview change; preset
text with HTML and script shows as text and runs nothing."""

from __future__ import annotations

import json

import pytest

from core.actors import Agent
from devtools.factories import XSS_PRESET

from .conftest import sign_in, wait_for_htmx

pytestmark = pytest.mark.browser


def test_carol_edits_the_last_user_message_and_sees_the_preview_change(page, carol):
    sign_in(page, "carol")
    page.goto("/servers/1001/preview/")
    result = page.locator("#result")
    assert "Mira: Is it... a secret?" in result.inner_text()

    page.locator("[data-testid=advanced] > summary").click()
    textarea = page.locator("textarea[name=document]")
    document = json.loads(textarea.input_value())
    document["history"][-1]["content"] = "Is it the lantern's shadow?"
    textarea.fill(json.dumps(document, indent=2))
    textarea.blur()  # a change event: htmx re-renders the result partial
    page.wait_for_function(
        "() => document.querySelector('#result').innerText.includes(\"Is it the lantern's shadow?\")"
    )
    wait_for_htmx(page)
    text = page.locator("#result").inner_text()
    assert "Mira: Is it the lantern's shadow?" in text
    assert "Mira: Is it... a secret?" not in text
    assert page.locator("textarea[name=document]").count() == 1  # a partial swap, not a reload

    page.locator("input[name=name]").fill("Shadow guess")
    page.locator("[data-testid=save-sample]").click()
    page.wait_for_load_state("networkidle")
    assert "Mira: Is it the lantern's shadow?" in page.locator("#result").inner_text()
    assert page.locator("select[name=sample] option:checked").inner_text() == "Shadow guess"


def test_a_preset_node_with_script_and_img_onerror_shows_as_text_and_runs_nothing(page, carol, lantern):
    from presets.services import preset_import

    preset_import(server=lantern, raw=json.dumps(XSS_PRESET).encode(), filename="xss.json", by=Agent("test"))
    sign_in(page, "carol")
    page.goto("/servers/1001/preview/")
    wait_for_htmx(page)
    text = page.locator("#result").inner_text()
    assert "<script>alert('x')</script>" in text
    assert "<img src=x onerror=\"alert('y')\">" in text
    assert page.locator("#result script").count() == 0
    assert page.locator("#result img").count() == 0
    page.locator("select[name=provider]").select_option("anthropic")
    wait_for_htmx(page)
    page.wait_for_timeout(300)
    assert page.dialogs == []
    assert not [e for e in page.console_errors if "Content Security Policy" in e]
