"""Alice reorders a preset's nodes in a real browser: by dragging a handle and from the keyboard.
The order persists after a reload and the preview assembles in the new order."""

from __future__ import annotations

import pytest

from presets import services
from presets.models import PresetNode
from tests.corpus import CORPUS, needs_corpus
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


@pytest.fixture
def nemoengine(lantern, alice):
    raw = (CORPUS / "pm" / "nemoengine-v10.json").read_bytes()
    return services.preset_import(server=lantern, raw=raw, filename="nemoengine-v10.json", by=alice).preset


def _answer_of(page, action) -> tuple[int, int]:
    """Run `action` (one htmx request) and return (status, bytes) of its answer."""
    with page.expect_response(lambda r: r.request.method == "POST") as caught:
        action()
    response = caught.value
    return response.status, len(response.body())


@needs_corpus
def test_alice_saves_and_moves_a_node_of_a_300_node_preset_in_place(page, lantern, alice, nemoengine):
    """The editor of nemoengine-v10 stays where it is: a save answers with the node's row, a move
    with the two rows that traded places, each a few kilobytes; the page never navigates."""
    node = PresetNode.objects.filter(preset=nemoengine, kind="content").order_by("position")[40]
    sign_in(page, "alice")
    page.set_viewport_size({"width": 1366, "height": 768})
    opened = page.goto(f"/servers/{lantern.id}/presets/{nemoengine.pk}/")
    assert len(opened.body()) <= 150_000  # a page of 50 folded nodes: names, kinds, tokens; no texts
    first_row = page.locator("#node-rows tr").first.bounding_box()
    assert first_row["y"] + first_row["height"] <= 768  # the node list starts on the first screen
    page.evaluate("() => { window.__same_page = true; }")  # gone if the page reloads or navigates
    row = page.locator(f"#node-{node.pk}")
    assert row.locator("textarea").count() == 0  # folded: its text is not on the page until opened

    row.get_by_role("link", name=f"Open {node.name}").click()
    textarea = page.locator(f"#node-{node.pk} textarea[name=content]")
    textarea.wait_for()
    textarea.fill("Tavernkeep edited this node in place.")
    status, size = _answer_of(page, lambda: page.locator(f"#node-{node.pk} button", has_text="Save").click())
    wait_for_htmx(page)
    assert status == 200 and size <= 150_000, size
    assert page.locator(f"#node-{node.pk} textarea").count() == 0  # folded again, with its new text
    assert "Saved" in page.locator("#node-status").inner_text()
    node.refresh_from_db()
    assert node.content == "Tavernkeep edited this node in place."

    above = page.locator(f"#node-{node.pk}").evaluate("r => r.previousElementSibling.dataset.node")
    status, size = _answer_of(page, lambda: page.get_by_role("button", name=f"Move {node.name} up").click())
    wait_for_htmx(page)
    assert status == 200 and size <= 150_000, size
    below = page.locator(f"#node-{node.pk}").evaluate("r => r.nextElementSibling.dataset.node")
    assert below == above  # the two rows traded places on the page
    assert page.locator(f"tr[data-node='{above}']").count() == 1
    assert stored_order_ids(nemoengine).index(node.pk) + 1 == stored_order_ids(nemoengine).index(int(above))

    # A second move right after the first is not a conflict: the page knows the new version.
    status, _ = _answer_of(page, lambda: page.get_by_role("button", name=f"Move {node.name} down").click())
    wait_for_htmx(page)
    assert status == 200
    assert stored_order_ids(nemoengine).index(node.pk) == stored_order_ids(nemoengine).index(int(above)) + 1
    assert page.evaluate("() => window.__same_page") is True
    assert page.console_errors == []


def stored_order_ids(preset) -> list[int]:
    return list(PresetNode.objects.filter(preset=preset).order_by("position").values_list("pk", flat=True))
