"""What a new admin notices first on a working day (issue 36): no false alarm when a node is saved,
channel names where the picker showed names, and a node deleted on a phone only on purpose."""

from __future__ import annotations

import pytest

from core.actors import SYSTEM
from presets import services
from presets.models import PresetNode
from servers import services as server_services
from servers.directory import DirectoryChannel, DirectoryMember
from tests.presets.conftest import make_preset

from .conftest import sign_in, wait_for_htmx

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GENERAL, CELLAR = 900000000000000001, 900000000000000005


@pytest.fixture
def tavern(lantern, alice):
    raw = make_preset(
        ("greet", "Greet every guest warmly.", True),
        ("rules", "No fighting in the tavern.", True),
    )
    return services.preset_import(server=lantern, raw=raw, filename="Tavern.json", by=alice).preset


def test_saving_a_node_in_place_flashes_no_chat_history_alarm(page, lantern, alice, tavern):
    """The preset has an enabled Chat History node: saving another node says it was saved, and says
    the node's own problem (HTML), never that the preset has no Chat History node."""
    rules = PresetNode.objects.get(preset=tavern, identifier="rules")
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.pk}/presets/{tavern.pk}/")
    page.get_by_role("link", name="Open Rules").click()
    textarea = page.locator(f"#node-{rules.pk} textarea[name=content]")
    textarea.wait_for()
    textarea.fill("No <b>fighting</b> in the tavern.")
    page.locator(f"#node-{rules.pk} button", has_text="Save").click()
    wait_for_htmx(page)
    said = page.locator("#node-status").inner_text() + page.locator("#flash").inner_text()
    assert "Saved" in said and "HTML" in said
    assert "Chat History" not in said


def test_the_channel_confirmation_and_the_audit_name_the_channel_picked(page, lantern, alice, tavern):
    server_services.directory_replace(
        server_id=lantern.pk,
        channels=[
            DirectoryChannel(id=GENERAL, name="tavern-hall", parent=None, private=False),
            DirectoryChannel(id=CELLAR, name="cellar", parent=None, private=False),
        ],
        members=[
            DirectoryMember(id=300000000000000001, display_name="Mira"),
            DirectoryMember(id=300000000000000002, display_name="Mira"),
        ],
        by=SYSTEM,
    )
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.pk}/presets/")
    page.get_by_test_id("channel-picker").select_option(label="#cellar")
    page.get_by_label("Preset").select_option(label="Tavern")
    page.get_by_test_id("channel-picker").locator("xpath=ancestor::form").get_by_role(
        "button", name="Set"
    ).click()
    page.wait_for_load_state("networkidle")
    assert "#cellar now uses “Tavern”." in page.locator("#flash").inner_text()
    assert str(CELLAR) not in page.locator("body").inner_text()  # the id is in tooltips only
    page.goto(f"/servers/{lantern.pk}/audit/")
    audit = page.get_by_test_id("audit-events").inner_text()
    assert "Channel preset set" in audit and "#cellar" in audit and str(CELLAR) not in audit
    page.goto(f"/servers/{lantern.pk}/memory/")
    members = page.locator("select[name=user] option").all_inner_texts()
    assert "Mira (…0001)" in members and "Mira (…0002)" in members


def test_on_a_phone_a_node_is_a_two_line_card_and_delete_asks_first(page, lantern, alice, tavern):
    page.set_viewport_size({"width": 390, "height": 844})
    greet = PresetNode.objects.get(preset=tavern, identifier="greet")
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.pk}/presets/{tavern.pk}/")
    row = page.locator(f"#node-{greet.pk}")
    assert page.locator("#node-rows tr").first.bounding_box()["y"] < 2 * 844  # the list on the second screen
    line = page.evaluate("() => parseFloat(getComputedStyle(document.body).lineHeight) || 24")
    height = row.bounding_box()["height"]
    assert height <= 2 * max(line, 44) + 24, height  # two lines of 44 px targets and the card's padding
    # The row keeps the moves (thumb-sized); copy and delete live in the opened node, apart.
    assert not row.get_by_role("button", name="Delete Greet").is_visible()
    for button in row.get_by_role("button").all():
        if button.is_visible():
            box = button.bounding_box()
            assert box["height"] >= 44 and box["width"] >= 44, button.inner_text()
    row.get_by_role("link", name="Open Greet").click()
    delete = page.locator(f"#node-{greet.pk}").get_by_role("button", name="Delete this node")
    delete.wait_for()
    copy = page.locator(f"#node-{greet.pk}").get_by_role("button", name="Copy this node")
    gap = delete.bounding_box()["x"] - (copy.bounding_box()["x"] + copy.bounding_box()["width"])
    assert delete.bounding_box()["height"] >= 44 and (
        gap >= 16 or delete.bounding_box()["y"] > copy.bounding_box()["y"]
    )
    delete.click()
    wait_for_htmx(page)
    question = page.get_by_test_id("confirm")
    assert (
        "Delete the node “Greet”" in question.inner_text()
        and "Versions can roll this back" in question.inner_text()
    )
    assert PresetNode.objects.filter(pk=greet.pk).exists()
