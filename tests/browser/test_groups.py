"""The Groups page in a real browser, on a laptop and on a phone: alice builds a party with the plain
form (tick, number, mute), sees it listed with its members, and gives a channel the group."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from characters import services as card_services
from core.actors import SYSTEM
from engine.cards import Card, card_png

from .conftest import sign_in

pytestmark = pytest.mark.browser


@pytest.fixture
def cards(lantern):
    for name in ("Mira", "Tomas", "Old Tom"):
        raw = card_png(Card(spec="chara_card_v2", name=name, description=f"{name} keeps the lighthouse."))
        card_services.card_import(server=lantern, raw=raw, filename=f"{name}.png", activate=False, by=SYSTEM)


@pytest.mark.parametrize("width", [1366, 390])
def test_alice_builds_a_party_on_the_groups_page_and_gives_it_a_channel(page, alice, lantern, cards, width):
    page.set_viewport_size({"width": width, "height": 844})
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.pk}/groups/")
    page.get_by_test_id("group-new").click()
    page.get_by_test_id("group-name").fill("Party")
    for name, position in (("Old Tom", "1"), ("Mira", "2")):
        row = page.locator(f"tr[data-card='{name}']")
        row.get_by_label("member").check()
        row.locator("input.group-order").fill(position)
    page.locator("tr[data-card='Old Tom']").get_by_label("muted").check()
    page.select_option("select[name=strategy]", "list")
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    page.get_by_test_id("group-save").click()
    row = page.locator("[data-testid=group-table] tbody tr").first
    members = row.locator(".group-members li")
    expect(members).to_have_count(2)  # waits for the saved group's page, however slow the machine
    assert members.nth(0).inner_text().startswith("Old Tom") and "muted" in members.nth(0).inner_text()
    assert members.nth(1).locator("a").first.inner_text().strip() == "Mira"
    assert "muted" not in members.nth(1).inner_text()
    expect(row.locator("img.group-avatar")).to_have_count(2)  # the cards came as PNGs
    page.wait_for_load_state("networkidle")  # the images too, before the console is read
    assert "List order" in row.inner_text()
    page.get_by_test_id("group-channel-id").fill("1234567890123456789")
    page.get_by_role("button", name="Set").click()
    expect(page.locator("[data-testid=group-table] tbody tr").first).to_contain_text("1234567890123456789")
    page.wait_for_load_state("networkidle")
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    assert page.console_errors == []


@pytest.mark.parametrize("width", [1366, 390])
def test_alice_keeps_notes_and_an_authors_note_by_channel_name_and_previews_as_a_member(
    page, alice, lantern, cards, width
):
    from groups import services as group_services
    from memory import services as memory_services
    from servers.directory import DirectoryChannel

    cellar = 1234567890123456790
    memory_services.directory_push(
        server_id=lantern.pk,
        channels=[DirectoryChannel(id=cellar, name="cellar", parent=None, private=False)],
        members=[],
        by=SYSTEM,
    )
    group = group_services.group_save(server=lantern, name="Party", members=["Mira", "Tomas"], by=SYSTEM)
    group_services.channel_group_set(server=lantern, channel_id=cellar, group=group, by=SYSTEM)
    page.set_viewport_size({"width": width, "height": 844})
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.pk}/groups/")
    expect(page.locator("[data-testid=group-table] tbody tr").first).to_contain_text("#cellar")

    form = page.get_by_test_id("note-form")
    form.get_by_test_id("note-channel-picker").select_option(str(cellar))
    form.get_by_test_id("note-member").select_option(label="Tomas")
    form.get_by_test_id("note-text").fill("Hides the cellar key.")
    form.get_by_role("button", name="Save the note").click()
    expect(page.locator("body")).to_contain_text("Saved Tomas's note in #cellar.")
    row = page.locator("[data-testid=member-notes] tr[data-note='Tomas']")
    expect(row).to_contain_text("#cellar")
    row.locator("textarea").fill("Gave the key to Mira.")
    row.get_by_role("button", name="Save").click()
    expect(page.locator("[data-testid=member-notes] tr[data-note='Tomas'] textarea")).to_have_value(
        "Gave the key to Mira."
    )

    notes = page.get_by_test_id("authors-note-form")
    notes.get_by_test_id("authors-note-channel-picker").select_option(str(cellar))
    notes.get_by_test_id("authors-note-text").fill("A storm is coming.")
    notes.get_by_role("button", name="Save the Author's Note").click()
    expect(page.locator("body")).to_contain_text("Saved the Author's Note of #cellar.")
    expect(page.get_by_test_id("authors-notes")).to_contain_text("#cellar")
    page.wait_for_load_state("networkidle")
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")

    page.get_by_role("link", name="Preview as Tomas").click()
    expect(page.get_by_test_id("preview-as")).to_contain_text("Previewing as Tomas")
    expect(page.locator(".preview-result")).to_contain_text("Tomas keeps the lighthouse.")
    assert page.console_errors == []
