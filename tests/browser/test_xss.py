"""Hostile text everywhere a server's staff or its bot can put it, rendered in a real browser: nothing
executes, nothing becomes markup, and the text is shown as the text it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assembly import services as bucket_services
from conversations import services as conversation_services
from memory import services as memory_services
from presets import services as preset_services
from servers import services as server_services
from servers.services import api_token_create
from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DEFAULT_BUCKETS = Path(__file__).resolve().parents[2] / "assembly" / "default_buckets.json"
PAYLOADS = [
    "<script>alert('x1')</script>",
    "<img src=x onerror=alert('x2')>",
    "<svg onload=alert('x3')><circle/></svg>",
    "<a href=\"javascript:alert('x4')\">x4</a>",
    "\"><script>alert('x5')</script>",
    "</textarea><script>alert('x6')</script>",
    "<iframe srcdoc=\"<script>alert('x7')</script>\"></iframe>",
    "{{7*7}} {% debug %} ${alert('x8')} {{ request.user }}",
]
EVIL = " ".join(PAYLOADS)
CHANNEL, USER = 930_001, 930_002


def hostile_preset() -> bytes:
    prompts = [
        {"identifier": "main", "name": PAYLOADS[0], "role": "system", "content": EVIL},
        {
            "identifier": "evil",
            "name": PAYLOADS[1],
            "role": "system",
            "content": "{{setvar::x::" + PAYLOADS[2] + "}}{{getvar::x}}",
        },
        {"identifier": "evil2", "name": PAYLOADS[3], "role": "user", "content": PAYLOADS[7]},
        {"identifier": "chatHistory", "name": "Chat History", "marker": True},
    ]
    return json.dumps({"prompts": prompts}).encode()


@pytest.fixture
def hostile_world(lantern, alice):
    lantern.name = PAYLOADS[1]  # a guild's name comes from Discord: anyone's text
    lantern.save(update_fields=["name"])
    preset = preset_services.preset_import(
        server=lantern, raw=hostile_preset(), filename="x.json", name=PAYLOADS[4][:100], by=alice
    ).preset
    api_token_create(server=lantern, name=PAYLOADS[1][:100], by=alice)
    server_services.channel_ensure(channel_id=CHANNEL, owner_id=lantern.pk, name=PAYLOADS[2][:100])
    memory_services.stm_store_turn(
        server_id=lantern.pk,
        channel_id=CHANNEL,
        user_id=USER,
        user_name=PAYLOADS[0][:100],
        messages=[{"role": "user", "name": PAYLOADS[3][:100], "content": EVIL}],
        summary=EVIL,
    )
    conversation = conversation_services.conversation_create(server=lantern, name=PAYLOADS[5][:100], by=alice)
    conversation_services.message_add(
        conversation=conversation, role="user", text=EVIL, speaker=PAYLOADS[1][:100], by=alice
    )
    conversation_services.message_add(
        conversation=conversation, role="assistant", text="{{setvar::k::" + PAYLOADS[0] + "}}ok", by=alice
    )
    document = json.loads(DEFAULT_BUCKETS.read_text())
    document["persona_prompt"] = EVIL
    document["names"] = {"user": PAYLOADS[0], "char": PAYLOADS[1]}
    document["history"] = [{"role": "user", "name": PAYLOADS[2], "content": EVIL}]
    bucket_services.sample_bucket_save(server=lantern, name=PAYLOADS[6][:100], document=document, by=alice)
    return preset, conversation


def assert_inert(page, where: str) -> None:
    """Nothing ran, no injected element exists, and the CSP had nothing to refuse."""
    assert page.dialogs == [], f"{where}: a dialog opened: {page.dialogs}"
    injected = page.evaluate(
        """() => ({
            imgs: document.querySelectorAll('img[src="x"]').length,
            svgs: document.querySelectorAll('svg[onload]').length,
            links: document.querySelectorAll('a[href^="javascript:"]').length,
            frames: document.querySelectorAll('iframe').length,
            handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
            inline: [...document.querySelectorAll('script')].filter(s => !s.src).length,
        })"""
    )
    assert injected == {"imgs": 0, "svgs": 0, "links": 0, "frames": 0, "handlers": 0, "inline": 0}, where
    errors = [e for e in page.console_errors if "x1" in e or "x2" in e or "Refused" in e or "alert" in e]
    assert errors == [], f"{where}: {errors}"


def test_hostile_text_is_shown_escaped_and_never_runs_on_any_page(page, lantern, alice, hostile_world):
    preset, conversation = hostile_world
    sign_in(page, "alice")
    pages = {
        "preset list": f"/servers/{lantern.pk}/presets/",
        "preset detail": f"/servers/{lantern.pk}/presets/{preset.pk}/",
        "preview": f"/servers/{lantern.pk}/preview/",
        "conversations": f"/servers/{lantern.pk}/conversations/",
        "conversation": f"/servers/{lantern.pk}/conversations/{conversation.pk}/",
        "memory review": f"/servers/{lantern.pk}/memory/?channel={CHANNEL}&user={USER}",
        "tokens": f"/servers/{lantern.pk}/tokens/",
        "audit": f"/servers/{lantern.pk}/audit/",
        "server": f"/servers/{lantern.pk}/",
    }
    shown = {}
    for where, url in pages.items():
        response = page.goto(url)
        assert response.status == 200, where
        page.wait_for_load_state("networkidle")
        assert_inert(page, where)
        text = page.inner_text("body")
        shown[where] = [payload for payload in PAYLOADS if payload[:30] in text]
    # Each page shows at least one payload as visible text (escaped, not parsed into markup).
    assert {where: bool(found) for where, found in shown.items()} == dict.fromkeys(pages, True), shown
    assert "{{7*7}}" in page.goto(f"/servers/{lantern.pk}/presets/{preset.pk}/").text()


def test_rendering_the_hostile_preset_in_the_preview_runs_nothing(page, lantern, alice, hostile_world):
    sign_in(page, "alice")
    page.goto(f"/servers/{lantern.pk}/preview/")
    page.wait_for_load_state("networkidle")
    button = page.locator("#preview-form button.primary")
    button.click()
    page.wait_for_load_state("networkidle")
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    assert_inert(page, "preview render")
    assert "<script>alert('x1')</script>" in page.get_by_test_id("messages").inner_text()
