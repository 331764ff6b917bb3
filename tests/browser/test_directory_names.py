"""The names the bot pushed in its directory show on the pages instead of raw Discord ids."""

from __future__ import annotations

import pytest

from core.actors import SYSTEM
from memory import services
from presets.channels import services as channel_services
from presets.services import preset_import
from servers import services as server_services
from servers.directory import DirectoryChannel, DirectoryMember
from tests.corpus import CORPUS, needs_corpus

from .conftest import sign_in

LANTERN = 1001
MIRA = 987654321098765432
GENERAL, CELLAR = 1234567890123456789, 1234567890123456790


@pytest.mark.browser
@needs_corpus
def test_alice_and_bob_see_the_pushed_channel_and_member_names(page, alice, bob, lantern):
    server_services.directory_replace(
        server_id=LANTERN,
        channels=[
            DirectoryChannel(id=GENERAL, name="general", parent=None, private=False),
            DirectoryChannel(id=CELLAR, name="cellar", parent=GENERAL, private=True),
        ],
        members=[DirectoryMember(id=MIRA, display_name="Mira Ashdown")],
        by=SYSTEM,
    )
    services.stm_store_turn(
        server_id=LANTERN, channel_id=GENERAL, user_id=MIRA, messages=[], summary="Mira ordered ale."
    )
    raw = (CORPUS / "pm" / "st-openai-Default.json").read_bytes()
    preset = preset_import(server=lantern, raw=raw, filename="Evening.json", by=alice).preset
    channel_services.channel_preset_set(server=lantern, channel_id=CELLAR, preset=preset, by=alice)

    sign_in(page, "bob")
    page.goto(f"/servers/{LANTERN}/memory/?channel={GENERAL}&user={MIRA}")
    title = page.locator("#stm-result-title").inner_text()
    assert "#general" in title and "Mira Ashdown" in title
    assert page.locator('[data-testid="entry-user"]').first.inner_text() == "Mira Ashdown"

    page.goto(f"/servers/{LANTERN}/presets/")
    row = page.locator(f'[data-testid="channel-presets"] tr[data-channel="{CELLAR}"]')
    assert "#cellar" in row.inner_text()
