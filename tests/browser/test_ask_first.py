"""Alice's destructive and bulk taps ask first, at 1366 px and on a 390 px phone, with htmx and with
JavaScript off: the question names what the action affects, "Keep it as it is" changes nothing, and
only the confirming button acts."""

from __future__ import annotations

import pytest

from core.actors import SYSTEM
from presets import services
from presets.channels.services import channel_preset_set
from presets.models import Preset, PresetNode
from servers.directory import DirectoryChannel
from servers.services import directory_replace
from tests.presets.conftest import make_preset

from .conftest import sign_in, wait_for_htmx

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TAPROOM = 900000000000000007
WIDTHS = [pytest.param(1366, id="1366px"), pytest.param(390, id="390px")]


@pytest.fixture
def tavern(lantern, alice):
    raw = make_preset(
        ("greet", "Greet every guest warmly.", True),
        ("rules", "No fighting in the tavern.", True),
    )
    preset = services.preset_import(server=lantern, raw=raw, filename="Tavern.json", by=alice).preset
    directory_replace(
        server_id=lantern.id,
        channels=[DirectoryChannel(id=TAPROOM, name="taproom", parent=None, private=False)],
        members=[],
        by=SYSTEM,
    )
    channel_preset_set(server=lantern, channel_id=TAPROOM, preset=preset, by=alice)
    return preset


def _fits(page, width: int) -> None:
    question = page.get_by_test_id("confirm")
    question.wait_for()
    for test_id in ("confirm-yes", "confirm-no"):
        box = page.get_by_test_id(test_id).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width and box["height"] >= 30, test_id
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("width", WIDTHS)
def test_deleting_a_preset_from_its_page_names_its_channel_and_waits(page, lantern, alice, tavern, width):
    page.set_viewport_size({"width": width, "height": 844})
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.pk}/presets/{tavern.pk}/")
    page.get_by_role("button", name="Delete this preset").click()
    page.wait_for_load_state("networkidle")
    _fits(page, width)
    said = page.get_by_test_id("confirm").inner_text()
    assert "Delete the preset “Tavern”?" in said and "#taproom" in said and not page.dialogs
    page.get_by_test_id("confirm-no").click()
    page.wait_for_load_state("networkidle")
    assert Preset.objects.filter(pk=tavern.pk).exists()
    page.get_by_role("button", name="Delete this preset").click()
    page.get_by_test_id("confirm-yes").click()
    page.wait_for_load_state("networkidle")
    assert not Preset.objects.filter(pk=tavern.pk).exists()


@pytest.mark.parametrize("width", WIDTHS)
def test_disable_all_under_htmx_asks_with_the_count_and_versions(page, lantern, alice, tavern, width):
    page.set_viewport_size({"width": width, "height": 844})
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.pk}/presets/{tavern.pk}/")
    page.get_by_role("button", name="Disable all").click()
    wait_for_htmx(page)
    _fits(page, width)
    said = page.get_by_test_id("confirm").inner_text()
    assert "Versions can roll this back" in said and "node" in said
    assert PresetNode.objects.filter(preset=tavern, identifier="greet", enabled=True).exists()
    page.get_by_test_id("confirm-yes").click()
    page.wait_for_load_state("networkidle")
    assert not PresetNode.objects.filter(preset=tavern, identifier="greet", enabled=True).exists()


def test_without_javascript_the_list_delete_asks_on_a_page(
    browser, live_server, lantern, alice, tavern, settings
):
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    try:
        page.set_viewport_size({"width": 390, "height": 844})
        sign_in(page, "alice")
        page.goto(f"/servers/{lantern.pk}/presets/")
        page.locator("#preset-table").get_by_role("button", name="Delete").first.click()
        page.wait_for_load_state("load")
        _fits(page, 390)
        assert "#taproom" in page.get_by_test_id("confirm").inner_text()
        assert Preset.objects.filter(pk=tavern.pk).exists()
        page.get_by_test_id("confirm-yes").click()
        page.wait_for_load_state("load")
        assert not Preset.objects.filter(pk=tavern.pk).exists()
    finally:
        context.close()
