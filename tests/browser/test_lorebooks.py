"""Lorebooks in a real browser: alice uploads one, carol previews a conversation that mentions a key
and sees why the entry was placed, bob can read the lorebook but change nothing."""

from __future__ import annotations

import json

import pytest

from .conftest import sign_in, wait_for_htmx

pytestmark = pytest.mark.browser

LORE = {
    "entries": {
        "0": {"key": ["lantern"], "comment": "The Lantern", "content": "The guild lantern never goes out."},
        "1": {"key": ["harbor"], "comment": "Harbor", "content": "Ships wait in the harbor.", "position": 4},
    }
}


def test_alice_uploads_carol_sees_the_entry_placed_and_bob_changes_nothing(
    page, browser, alice, bob, carol, tmp_path
):
    lore = tmp_path / "Guild Lore.json"
    lore.write_text(json.dumps(LORE))

    sign_in(page, "alice")
    page.goto("/servers/1001/lorebooks/upload/")
    page.set_input_files("[data-testid=lorebook-file]", str(lore))
    page.locator("#upload-form button[type=submit]").click()
    page.wait_for_url("**/lorebooks/*/?imported=1")
    summary = page.locator("[data-testid=import-summary]").inner_text()
    assert "Imported: what we found" in summary
    assert "The Lantern" in page.locator("[data-testid=entries]").inner_text()

    carol_page = browser.new_context(base_url=page.url.split("/servers")[0]).new_page()
    sign_in(carol_page, "carol")
    carol_page.goto("/servers/1001/preview/")
    carol_page.locator("[data-testid=advanced] > summary").click()
    textarea = carol_page.locator("textarea[name=document]")
    document = json.loads(textarea.input_value())
    document["history"][-1]["content"] = "Is it the lantern?"
    textarea.fill(json.dumps(document, indent=2))
    textarea.blur()
    carol_page.wait_for_function("() => document.querySelector('#result').innerText.includes('World Info')")
    wait_for_htmx(carol_page)
    panel = carol_page.locator("[data-testid=world-info]").inner_text()
    message_number = len(document["history"])
    assert f'key "lantern" in message {message_number}' in panel
    assert "The guild lantern never goes out." in carol_page.locator("#result").text_content()

    bob_page = browser.new_context(base_url=page.url.split("/servers")[0]).new_page()
    sign_in(bob_page, "bob")
    bob_page.goto("/servers/1001/lorebooks/")
    assert "Guild Lore" in bob_page.locator("#lorebook-table").inner_text()
    assert bob_page.locator("#lorebook-table button").count() == 0  # no activate, deactivate or delete
    bob_page.locator("#lorebook-table a", has_text="Guild Lore").click()
    bob_page.wait_for_load_state("networkidle")
    assert bob_page.locator("[data-testid=entries] button").count() == 0  # no toggles
    assert bob_page.locator("form[action$='/settings/']").count() == 0
