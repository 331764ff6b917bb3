"""Alice uploads a real SillyTavern preset in the browser, reads its summary, toggles a node and
activates it; charlie, from another server, cannot even see that the library exists."""

from __future__ import annotations

import pytest

from presets.models import Preset
from tests.browser.conftest import sign_in, wait_for_htmx
from tests.corpus import CORPUS, needs_corpus

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REAL_PRESET = CORPUS / "pm/marinara-spaghetti-recipe-essentials.json"


@needs_corpus
def test_alice_uploads_reads_the_summary_toggles_a_node_and_activates_the_preset(page, lantern, alice):
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.id}/presets/")
    page.get_by_test_id("upload-link").click()
    page.set_input_files("input[name=file]", str(REAL_PRESET))
    page.uncheck("input[name=activate]")
    page.get_by_role("button", name="Upload").click()
    page.wait_for_url("**/presets/*/?imported=1")

    summary = page.get_by_test_id("import-summary")
    assert "Imported: what we found" in summary.inner_text()
    preset = Preset.objects.get(server=lantern)
    assert preset.name == REAL_PRESET.stem and not preset.is_active
    assert summary.get_by_role("link", name="What these mean, in SillyTavern terms").count() == 1

    first_on = page.locator("tr.node:not(.is-off) button.toggle.on").first
    row_id = first_on.locator("xpath=ancestor::tr").get_attribute("id")
    enabled_before = (
        preset.nodes.filter(enabled=True).exclude(kind="comment").exclude(identifier="chatHistory").count()
    )
    assert f"{enabled_before} of" in page.get_by_test_id("preset-counts").inner_text()
    first_on.click()
    wait_for_htmx(page)
    assert "is-off" in page.locator(f"#{row_id}").get_attribute("class")
    assert f"{enabled_before - 1} of" in page.get_by_test_id("preset-counts").inner_text()
    node_pk = int(row_id.removeprefix("node-"))
    assert not preset.nodes.get(pk=node_pk).enabled

    page.get_by_test_id("activate").click()
    page.wait_for_load_state("networkidle")
    assert page.get_by_test_id("active-badge").is_visible()
    page.goto(f"/servers/{lantern.id}/presets/")
    assert REAL_PRESET.stem in page.get_by_test_id("active-status").inner_text()
    refused = [e for e in page.console_errors if "Content Security Policy" in e or "Refused to" in e]
    assert refused == []  # an inline script or style would be refused by the CSP and logged here


@needs_corpus
def test_alice_filters_the_nodes_and_disables_the_matching_ones_in_bulk(page, lantern, alice):
    from presets import services

    preset = services.preset_import(
        server=lantern, raw=REAL_PRESET.read_bytes(), filename=REAL_PRESET.name, by=alice
    ).preset
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.id}/presets/{preset.pk}/")
    page.select_option("select[name=kind]", "marker")
    wait_for_htmx(page)
    page.wait_for_function("() => document.querySelectorAll('#node-list tr.node').length > 0")
    rows = page.locator("#node-list tr.node")
    assert rows.count() == preset.nodes.filter(kind="marker").count()
    page.get_by_role("button", name="Disable matching").click()
    wait_for_htmx(page)
    page.get_by_test_id("confirm-yes").click()  # it asks first, naming the count
    page.wait_for_load_state("networkidle")
    assert list(preset.nodes.filter(kind="marker", enabled=True).values_list("identifier", flat=True)) in (
        [],
        ["chatHistory"],
    )


def test_charlie_cannot_reach_the_lantern_presets(page, lantern, charlie):
    sign_in(page, "charlie")
    response = page.goto(f"/servers/{lantern.id}/presets/")
    assert response.status == 404


@needs_corpus
def test_alice_is_asked_about_a_name_clash_and_keeps_both_without_choosing_the_file_again(
    page, lantern, alice
):
    from presets import services

    services.preset_import(server=lantern, raw=REAL_PRESET.read_bytes(), filename=REAL_PRESET.name, by=alice)
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.id}/presets/upload/")
    page.set_input_files("input[name=file]", str(REAL_PRESET))
    page.get_by_role("button", name="Upload").click()
    wait_for_htmx(page)
    assert "already exists" in page.get_by_test_id("upload-error").inner_text()
    page.check("input[name=on_clash][value=keep_both]")
    page.get_by_role("button", name="Upload").click()
    page.wait_for_url("**/presets/*/?imported=1")
    assert page.get_by_test_id("preset-name").inner_text().startswith(f"{REAL_PRESET.stem} (2)")


def test_the_upload_progress_bar_follows_htmx_progress_events(page, lantern, alice):
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.id}/presets/upload/")
    bar = page.get_by_test_id("upload-progress")
    assert not bar.is_visible()
    page.evaluate(
        """() => document.getElementById('upload-form').dispatchEvent(new CustomEvent('htmx:xhr:progress',
            {bubbles: true, detail: {lengthComputable: true, loaded: 30, total: 120}}))"""
    )
    assert bar.is_visible()
    assert bar.evaluate("el => el.value") == 25
