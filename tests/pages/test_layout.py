"""Pages every role shares: navigation per role, the server home's status, messages shown once,
the project's own error pages and one log handler."""

from __future__ import annotations

import logging
import logging.config

import pytest
from django.apps import apps as django_apps
from django.conf import settings
from django.test import Client
from django.urls import reverse

from presets.services import preset_import

pytestmark = pytest.mark.django_db

PRESET = (
    b'{"prompts": [{"identifier": "main", "name": "Main", "role": "system", "content": "Hi."},'
    b' {"identifier": "chatHistory", "name": "Chat History", "marker": true}],'
    b' "prompt_order": [{"character_id": 100001, "order": [{"identifier": "main", "enabled": true},'
    b' {"identifier": "chatHistory", "enabled": true}]}]}'
)


def _nav(client: Client, server_id: int) -> str:
    html = client.get(reverse("servers:server", args=[server_id])).content.decode()
    return html[html.index('<nav class="server-nav"') : html.index("</nav>")]


def test_alice_finds_the_api_tokens_in_the_navigation(client, alice, lantern):
    client.force_login(alice)
    assert reverse("servers:tokens", args=[lantern.id]) in _nav(client, lantern.id)


@pytest.mark.parametrize("persona", ["bob", "carol"])
def test_moderators_and_support_see_no_api_tokens_link(client, persona, request, lantern):
    client.force_login(request.getfixturevalue(persona))
    nav = _nav(client, lantern.id)
    assert reverse("servers:tokens", args=[lantern.id]) not in nav
    assert reverse("presets:list", args=[lantern.id]) in nav
    assert reverse("presets:sampling", args=[lantern.id]) in nav  # the sampler is one tap away too


def test_bob_is_not_invited_to_upload_presets(client, bob, lantern):
    client.force_login(bob)
    for name in ("servers:server", "presets:list"):
        html = client.get(reverse(name, args=[lantern.id])).content.decode()
        assert "Upload" not in html, name


def test_the_server_home_shows_the_active_preset_counts_and_recent_changes(client, alice, carol, lantern):
    preset_import(server=lantern, raw=PRESET, filename="Evening.json", by=alice)
    client.force_login(carol)
    response = client.get(reverse("servers:server", args=[lantern.id]))
    status = response.context["status"]
    assert status.active_preset == "Evening"
    assert {fact.label: fact.value for fact in status.facts}["Presets"] == 1
    html = response.content.decode()
    assert "Active preset:" in html and "Evening" in html
    assert "preset.import" in html  # the audit event of the upload, under "Recent changes"


def test_the_server_home_lists_each_apps_count_once_in_its_order_even_after_the_apps_ready_again(
    client, carol, lantern
):
    # Each app adds its own count from its AppConfig.ready() (servers names none of them).
    for name in ("presets", "characters", "regex_scripts", "assembly", "conversations", "memory", "groups"):
        django_apps.get_app_config(name).ready()
    client.force_login(carol)
    facts = client.get(reverse("servers:server", args=[lantern.id])).context["status"].facts
    assert [fact.label for fact in facts] == [
        "Presets",
        "Character cards",
        "Server regex scripts",
        "Saved samples",
        "Sample conversations",
        "Channels with memory",
        "Stored memories",
    ]


def test_a_token_message_shown_by_the_htmx_panel_does_not_come_back_on_the_next_page(client, alice, lantern):
    client.force_login(alice)
    response = client.post(
        reverse("servers:tokens", args=[lantern.id]), {"name": "bot"}, headers={"HX-Request": "true"}
    )
    html = response.content.decode()
    assert 'hx-swap-oob="innerHTML:#flash"' in html
    assert "Token created. Copy it now" in html
    later = client.get(reverse("presets:list", args=[lantern.id])).content.decode()
    assert "Token created" not in later


def test_a_message_after_a_plain_form_post_shows_once_on_the_next_page(client, alice, lantern):
    preset = preset_import(server=lantern, raw=PRESET, filename="Evening.json", by=alice).preset
    client.force_login(alice)
    client.post(reverse("presets:rename", args=[lantern.id, preset.pk]), {"name": "Night"})
    first = client.get(reverse("presets:detail", args=[lantern.id, preset.pk])).content.decode()
    second = client.get(reverse("presets:detail", args=[lantern.id, preset.pk])).content.decode()
    assert first.count("Renamed to") == 1 and "Renamed to" not in second


def test_an_outsider_sees_the_projects_own_404_page_with_debug_off(client, charlie, lantern, settings):
    settings.DEBUG = False
    client.force_login(charlie)
    response = client.get(reverse("presets:list", args=[lantern.id]))
    assert response.status_code == 404
    html = response.content.decode()
    assert "There is nothing here, or you are not a member of this server." in html
    assert "URLconf" not in html


def test_an_unexpected_error_shows_the_projects_own_500_page(rf):
    from django.views.defaults import server_error

    response = server_error(rf.get("/"))
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong" in html and "/static/css/app.css" in html


def test_a_django_warning_reaches_exactly_one_log_handler():
    logging.config.dictConfig(settings.LOGGING)
    handlers = []
    logger: logging.Logger | None = logging.getLogger("django.request")
    while logger is not None:
        handlers.extend(logger.handlers)
        logger = logger.parent if logger.propagate else None
    assert len(handlers) == 1
