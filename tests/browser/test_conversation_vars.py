"""Carol (support) deletes a message that set `hp` and watches the variable go back
(docs/conversations.md)."""

from __future__ import annotations

import pytest

from conversations import services
from tests.browser.conftest import sign_in, wait_for_htmx

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def siege(lantern, alice, carol):
    conversation = services.conversation_create(server=lantern, name="Siege", by=alice)
    for role, text in [
        ("user", "We storm the gate."),
        ("assistant", "The gate holds. {{setvar::hp::30}}{{setvar::quest::gate}}"),
        ("user", "Again!"),
        ("assistant", "An arrow finds you. {{setvar::hp::12}}{{setvar::wounded::yes}}"),
    ]:
        services.message_add(conversation=conversation, role=role, text=text, speaker="Rin", by=alice)
    return conversation


def final_value(page, key: str) -> str | None:
    row = page.locator(f'[data-testid="final-state"] tr[data-key="{key}"] .conv-value')
    return row.inner_text() if row.count() else None


def test_carol_deletes_the_message_that_set_hp_and_sees_the_earlier_value_return(page, lantern, siege):
    sign_in(page, "carol")
    page.goto(f"/servers/{lantern.id}/conversations/{siege.id}/")
    assert final_value(page, "hp") == "12"
    assert final_value(page, "wounded") == "yes"

    arrow = page.locator('[data-testid="message"]').filter(has_text="An arrow finds you.")
    assert "{{setvar" not in arrow.locator('[data-testid="message-text"]').inner_text()
    arrow.get_by_role("button", name="Delete message").click()
    wait_for_htmx(page)
    assert "variable changes go with it" in page.get_by_test_id("confirm").inner_text()
    page.get_by_test_id("confirm-yes").click()  # it asks first
    page.wait_for_load_state("networkidle")

    assert page.locator('[data-testid="message"]').filter(has_text="An arrow finds you.").count() == 0
    assert final_value(page, "hp") == "30"
    assert final_value(page, "wounded") is None
    gate = page.locator('[data-testid="message"]').filter(has_text="The gate holds.")
    gate.locator('[data-testid="ops-panel"] summary').click()
    panel = gate.locator('[data-testid="ops-panel"]')
    assert panel.locator('tr[data-key="hp"] .conv-value').inner_text() == "30"
    assert panel.locator('[data-testid="op-row"]').count() == 2
    assert page.dialogs == []

    # The preview, opened from the conversation, starts from the replayed state.
    page.get_by_role("link", name="Preview from this conversation").click()
    page.wait_for_load_state("networkidle")
    variables = page.locator('[data-testid="variables"]')
    assert variables.locator('tr[data-var="hp"] .var-value').inner_text() == "30"
    assert variables.locator('tr[data-var="wounded"]').count() == 0
    result = page.locator('[data-testid="result"]').inner_text()
    assert "The gate holds." in result
    assert "An arrow finds you." not in result


def test_carol_picks_the_conversation_in_the_preview_form_and_sees_its_variables(page, lantern, siege):
    sign_in(page, "carol")
    page.goto(f"/servers/{lantern.id}/preview/")
    assert page.locator('[data-testid="variables-local"] tr[data-var="hp"]').count() == 0
    page.select_option('[data-testid="conversation-select"]', label="Conversation: Siege")
    wait_for_htmx(page)
    page.wait_for_function("() => document.querySelector('tr[data-var=hp] .var-value')?.textContent === '12'")
    assert "An arrow finds you." in page.locator('[data-testid="result"]').inner_text()
    assert page.dialogs == []
