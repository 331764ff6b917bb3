"""Alice reorders a preset's nodes in a real browser: by dragging a handle and from the keyboard.
The order persists after a reload and the preview assembles in the new order."""

from __future__ import annotations

import pytest

from presets import services
from presets.models import PresetNode
from tests.presets.conftest import make_preset

from .conftest import sign_in, wait_for_htmx

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def tavern(lantern, alice):
    raw = make_preset(
        ("greet", "Greet every guest warmly.", True),
        ("rules", "No fighting in the tavern.", True),
        ("toast", "Raise a glass at midnight.", True),
    )
    return services.preset_import(server=lantern, raw=raw, filename="Tavern.json", by=alice).preset


def stored_order(preset) -> list[str]:
    return list(
        PresetNode.objects.filter(preset=preset).order_by("position").values_list("identifier", flat=True)
    )


def shown_order(page) -> list[str]:
    return page.locator("#node-list tbody tr.node").evaluate_all(
        "rows => rows.map(r => r.dataset.identifier || '')"
    )


def wait_for_saved(page) -> None:
    page.wait_for_function(
        "() => (document.getElementById('reorder-status') || {}).textContent?.startsWith('Saved')"
    )
    wait_for_htmx(page)


def test_alice_drags_a_node_and_the_order_persists_and_reaches_the_preview(page, lantern, alice, tavern):
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.id}/presets/{tavern.pk}/")
    toast = page.locator("tr[data-identifier=toast] [data-testid=drag-handle]")
    greet_row = page.locator("tr[data-identifier=greet]")
    toast.hover()  # scrolls the handle into view first: measure the target after it
    box = greet_row.bounding_box()
    page.mouse.down()
    page.mouse.move(box["x"] + 40, box["y"] + box["height"] * 0.3, steps=8)
    page.mouse.up()
    wait_for_saved(page)

    expected = ["main", "toast", "greet", "rules", "charDescription", "chatHistory"]
    assert stored_order(tavern) == expected, (
        stored_order(tavern),
        page.locator("#reorder-status").text_content(),
    )
    page.reload()
    assert [i for i in shown_order(page) if i] == expected

    page.goto(f"/servers/{lantern.id}/preview/")
    wait_for_htmx(page)
    text = page.locator("#result").inner_text()
    assert (
        text.index("Raise a glass at midnight.")
        < text.index("Greet every guest warmly.")
        < text.index("No fighting in the tavern.")
    )
    refused = [e for e in page.console_errors if "Content Security Policy" in e or "Refused to" in e]
    assert refused == []


def test_alice_reorders_from_the_keyboard(page, lantern, alice, tavern):
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.id}/presets/{tavern.pk}/")
    handle = page.locator("tr[data-identifier=greet] [data-testid=drag-handle]")
    handle.focus()
    page.keyboard.press("Space")
    assert "Picked up" in page.locator("#reorder-status").text_content()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Space")
    wait_for_saved(page)
    assert stored_order(tavern)[:4] == ["main", "rules", "toast", "greet"]
    focused = page.evaluate("() => document.activeElement.closest('tr').dataset.identifier")
    assert focused == "greet"  # focus stays on the node that moved, to keep moving it

    page.keyboard.press("Space")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Escape")
    assert stored_order(tavern)[:4] == ["main", "rules", "toast", "greet"]
    assert [i for i in shown_order(page) if i][:4] == ["main", "rules", "toast", "greet"]
