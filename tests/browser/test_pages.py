"""Pages people can use on a laptop and on a phone: every page of the resolver fits the screen for
every persona, the preview of a 300-node preset stays short, the sample is a form that re-renders
the preview, and a message shown once does not come back."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from presets.services import preset_import
from tests.corpus import CORPUS, needs_corpus
from tests.security.conftest import build_world
from tests.security.routes import PAGES, all_routes

from .conftest import sign_in, wait_for_htmx

pytestmark = pytest.mark.browser

WIDTHS = {"laptop": 1366, "phone": 390}
PERSONAS = ("alice", "bob", "carol", "charlie")


def _page_urls(world) -> list[str]:
    """Every GET page the resolver knows (the security walk's table), for the world's server."""
    kwargs = world.kwargs()
    urls = []
    for route in all_routes():
        if "GET" not in PAGES.get(route.name, {}):
            continue
        urls.append(reverse(route.name, kwargs={key: kwargs[key] for key in route.kwargs}))
    return urls


def _pages_to_read(world) -> list[str]:
    """The GET pages that are pages, not downloads (a preset's JSON, a card's PNG)."""
    return [url for url in _page_urls(world) if "download" not in url and not url.endswith((".png", ".json"))]


def _overflow(page) -> tuple[int, int]:
    return page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")


# One evaluate a page: how wide the page scrolls, which visible texts of 4+ characters sit in a box
# narrower than 48 px (a crushed column: the text wraps there, "Tok/ens" or one letter a line), and
# whether our own words for the spec or the sample store leak onto the page.
MEASURE = """() => {
  const crushed = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent.trim();
    if (text.length < 4 || !node.parentElement) continue;
    range.selectNodeContents(node);
    const box = range.getBoundingClientRect();
    if (box.width < 2 || box.width >= 48) continue;  // not rendered (or clipped away), or wide enough
    const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
    const style = getComputedStyle(node.parentElement);
    if (lines.size > 1 && style.visibility !== "hidden") crushed.push(`${text.slice(0, 24)} (${Math.round(box.width)} px)`);
  }
  // A token's shown start is random text (it may hold "-Y_IDA-"), not a name of ours: left out.
  let text = document.body.innerText;
  for (const shown of document.querySelectorAll('td[data-label="Starts with"] code, code.token')) {
    text = text.split(shown.innerText).join(" ");
  }
  const words = [
    ...(text.match(/SPEC\\s*§|§\\s*\\d|bucket/gi) || []),
    // internal names a user should not have to read: block tags, tokenizer ids, storage codes
    ...(text.match(/\\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\\b|o200k_base|cl100k_base|schema version|lineage|docs\\/\\w+\\.md|prompt_manager|: (?:True|False)\\b/g) || []),
    ...(text.match(/\\b(?:preset|lorebook|card|regex|stm|server|token|conversation|sample_bucket|membership)\\.(?:[a-z_]+\\.)?(?:import|replace|activate|deactivate|delete|rename|add|edit|enable|disable|move|reorder|rollback|set|clear|create|revoke|settings|update|directory|tokenizer)\\b/g) || []),
  ];
  return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth, crushed: crushed.slice(0, 5), words};
}"""


def _walk(browser, base_url: str, persona: str, urls: list[str], width: int) -> list[str]:
    """Every page as `persona` in one context and one page; a line for each thing a user would trip on."""
    context = browser.new_context(base_url=base_url, viewport={"width": width, "height": 844})
    page = context.new_page()
    problems = []
    try:
        sign_in(page, persona)
        for url in urls:
            page.goto(url)
            page.wait_for_load_state("networkidle")
            seen = page.evaluate(MEASURE)
            if seen["scroll"] > seen["inner"]:
                problems.append(f"{persona} {url}: scrolls sideways ({seen['scroll']} > {seen['inner']})")
            if seen["crushed"]:
                problems.append(f"{persona} {url}: crushed text {seen['crushed']}")
            if seen["words"]:
                problems.append(f"{persona} {url}: shows {seen['words']}")
    finally:
        context.close()
    return problems


@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
def test_every_page_fits_and_reads_for_every_persona(
    browser, live_server, settings, width, lantern, harbor, alice, bob, carol, charlie
):
    """alice, bob and carol walk every Lantern page, charlie every Harbor Hall page (and Lantern's
    door, which turns him away): nothing scrolls sideways, no word is crushed into a column too narrow
    to read, and no page talks about SPEC sections, bucket documents or the code's internal names
    (block tags such as DIALOGUE_HISTORY, tokenizer ids, audit codes such as preset.nodes.reorder)."""
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    lantern_urls = _pages_to_read(build_world(lantern, alice, "Lantern", 710_000_000_000_000_000))
    harbor_urls = _pages_to_read(build_world(harbor, charlie, "Harbor", 720_000_000_000_000_000))
    assert len(lantern_urls) >= 10
    problems = []
    for persona in ("alice", "bob", "carol"):
        problems += _walk(browser, live_server.url, persona, lantern_urls, width)
    problems += _walk(browser, live_server.url, "charlie", [*harbor_urls, f"/servers/{lantern.pk}/"], width)
    assert problems == [], "\n".join(problems)


def test_on_a_phone_the_menu_folds_and_a_tap_shows_the_servers_pages(page, alice, lantern):
    page.set_viewport_size({"width": 390, "height": 800})
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.id}/")
    nav = page.locator(".server-nav")
    tokens = nav.get_by_role("link", name="API tokens")
    assert not tokens.is_visible()
    page.locator("[data-testid=nav-toggle]").click()
    assert tokens.is_visible()
    assert nav.get_by_role("link", name="Audit").is_visible()


@pytest.fixture
def nemoengine(lantern, alice):
    raw = (CORPUS / "pm" / "nemoengine-v10.json").read_bytes()
    return preset_import(server=lantern, raw=raw, filename="nemoengine-v10.json", by=alice).preset


@needs_corpus
def test_the_preview_of_a_300_node_preset_is_short_and_a_message_opens_on_click(page, carol, nemoengine):
    assert nemoengine.nodes.count() >= 300
    page.set_viewport_size({"width": 1366, "height": 900})
    sign_in(page, "carol")
    page.goto(f"/servers/{nemoengine.server_id}/preview/")
    page.wait_for_load_state("networkidle")
    assert page.locator("[data-testid=message]").count() >= 20
    height = page.evaluate("() => document.documentElement.scrollHeight")
    # each sample dialogue is now a separator and one message per turn
    # (docs/assembly.md#what-sillytavern-118-corrected): more folded rows
    assert height < 5000, height

    folded = page.locator("[data-testid=messages] details.msg-details:not([open])").first.element_handle()
    content = folded.query_selector("pre.msg-content")
    assert not content.is_visible()
    folded.query_selector("summary").click()
    assert content.is_visible()
    assert folded.get_attribute("open") is not None

    page.set_viewport_size({"width": 390, "height": 800})
    assert _overflow(page)[0] <= 390


@needs_corpus
def test_the_source_filter_shows_only_history_messages(page, carol, nemoengine):
    sign_in(page, "carol")
    page.goto(f"/servers/{nemoengine.server_id}/preview/")
    messages = page.locator("[data-testid=messages] [data-testid=message]")
    everything = sum(1 for i in range(messages.count()) if messages.nth(i).is_visible())
    page.locator("#show-history").check()
    shown = [messages.nth(i) for i in range(messages.count()) if messages.nth(i).is_visible()]
    assert 0 < len(shown) < everything
    assert all("has-history" in (m.get_attribute("class") or "") for m in shown)


def test_carol_changes_a_history_line_in_the_form_and_the_preview_updates(page, carol, lantern):
    sign_in(page, "carol")
    page.goto(f"/servers/{lantern.id}/preview/")
    assert "Mira: Is it... a secret?" in page.locator("#result").text_content()
    page.locator("details[data-section=dialogue] > summary").click()
    rows = page.locator("[data-testid=history-row]")
    last = rows.last.locator("textarea")
    last.fill("Is it the moon's reflection?")
    last.blur()
    page.wait_for_function(
        "() => document.querySelector('#result').textContent.includes(\"Mira: Is it the moon's reflection?\")"
    )
    wait_for_htmx(page)
    assert "Mira: Is it... a secret?" not in page.locator("#result").text_content()
    # The JSON view follows the form.
    document = json.loads(page.locator("#document").input_value())
    assert document["history"][-1]["content"] == "Is it the moon's reflection?"

    count = rows.count()
    page.locator("[data-testid=add-history]").click()
    page.wait_for_function(
        f"() => document.querySelectorAll('[data-testid=history-row]').length === {count + 1}"
    )
    wait_for_htmx(page)
    assert rows.last.locator("select").input_value() == "assistant"  # a new line answers the user
    assert page.dialogs == []


def test_carol_edits_the_json_view_and_the_form_follows(page, carol, lantern):
    sign_in(page, "carol")
    page.goto(f"/servers/{lantern.id}/preview/")
    page.locator("[data-testid=advanced] > summary").click()
    textarea = page.locator("#document")
    document = json.loads(textarea.input_value())
    document["names"]["user"] = "Quill"
    document["history"][-1]["content"] = "Is it a candle?"
    textarea.fill(json.dumps(document, indent=2))
    textarea.blur()
    page.wait_for_function("() => document.querySelector('input[name=\"b-names.user\"]').value === 'Quill'")
    wait_for_htmx(page)
    assert page.locator("[data-testid=history-row] textarea").last.input_value() == "Is it a candle?"
    assert "Mira: Is it a candle?" in page.locator("#result").text_content()


def test_the_token_message_shows_once_and_does_not_come_back(page, alice, lantern):
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.id}/tokens/")
    page.fill("input[name=name]", "tomori")
    page.get_by_role("button", name="Create token").click()
    wait_for_htmx(page)
    page.wait_for_selector("[data-testid=new-token]")
    assert "Token created. Copy it now" in page.locator("#flash").inner_text()
    page.goto(f"/servers/{lantern.id}/presets/")
    assert "Token created" not in page.content()
    page.goto(f"/servers/{lantern.id}/tokens/")
    assert "Token created" not in page.content()


@needs_corpus
def test_the_clash_buttons_finish_an_upload_without_choosing_the_file_again(page, alice, lantern, tmp_path):
    first = (CORPUS / "pm" / "st-openai-Default.json").read_bytes()
    preset_import(server=lantern, raw=first, filename="Evening.json", by=alice)
    file = tmp_path / "Evening.json"
    file.write_bytes((CORPUS / "pm" / "marinara-special.json").read_bytes())
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.id}/presets/upload/")
    page.set_input_files("[data-testid=preset-file]", str(file))
    page.get_by_role("button", name="Upload").click()
    page.wait_for_selector("[data-testid=clash-keep-both]")
    assert "already exists" in page.locator("[data-testid=upload-error]").inner_text()
    page.locator("[data-testid=clash-keep-both]").click()
    page.wait_for_url("**/?imported=1")
    assert page.locator("[data-testid=preset-name]").inner_text().startswith("Evening (2)")
    assert page.dialogs == []
