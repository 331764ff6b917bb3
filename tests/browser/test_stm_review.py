"""Bob the moderator marks a channel private and watches its memory leave another channel's review."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory import services
from servers.models import Channel

from .conftest import sign_in, wait_for_htmx

LANTERN = 1001
MIRA = 7001
HALL, OFFICERS = 600, 601


@pytest.mark.browser
def test_bob_marks_a_channel_private_and_its_memory_disappears_from_another_channels_review(
    page, bob, lantern
):
    now = timezone.now()
    for channel, name, summary in [
        (HALL, "hall", ""),
        (OFFICERS, "officers", "The officers planned the budget."),
    ]:
        services.stm_put_entry(
            server_id=LANTERN,
            channel_id=channel,
            user_id=MIRA,
            messages=[],
            summary=summary,
            updated_at=now - timedelta(hours=1),
        )
        Channel.objects.filter(discord_id=channel).update(name=name)

    sign_in(page, "bob")
    page.goto(f"/servers/{LANTERN}/memory/?channel={HALL}&user={MIRA}")
    officers_row = page.locator(f'tr[data-entry-channel="{OFFICERS}"]')
    assert officers_row.get_attribute("data-verdict") == "shown"
    assert "The officers planned the budget." in page.locator('[data-testid="stm-items"]').inner_text()

    page.click(f'[data-testid="private-toggle-{OFFICERS}"]')
    wait_for_htmx(page)
    page.wait_for_selector(f'tr[data-entry-channel="{OFFICERS}"][data-verdict="hidden_private_channel"]')

    assert page.locator('[data-testid="stm-items"]').count() == 0
    assert page.locator('[data-testid="stm-no-items"]').is_visible()
    assert page.url.endswith(f"/memory/?channel={HALL}&user={MIRA}")  # htmx swapped in place
    assert Channel.objects.get(discord_id=OFFICERS).is_private
    assert not [e for e in page.console_errors if "Content Security Policy" in e]
