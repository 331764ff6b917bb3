"""Managing the library: activate, deactivate, rename, delete, style, toggles, download."""

from __future__ import annotations

import json
import threading

import pytest
from django.db import IntegrityError, connection, transaction
from django.urls import reverse

from presets import services
from presets.models import Preset, PresetNode
from servers.models import AuditEvent
from tests.conftest import REAL_SERVICES

pytestmark = pytest.mark.django_db


def active_names(server) -> list[str]:
    return list(Preset.objects.filter(server=server, is_active=True).values_list("name", flat=True))


def test_alice_activates_a_preset_and_the_other_one_stops_being_active(
    client, alice, lantern, house_style, second_preset
):
    client.force_login(alice)
    response = client.post(reverse("presets:activate", args=[lantern.id, second_preset.pk]))
    assert response.status_code == 302
    assert active_names(lantern) == ["Second"]
    assert AuditEvent.objects.filter(server=lantern, action="preset.activate", actor=alice).exists()


def test_activating_from_the_list_with_htmx_returns_the_table_partial(
    client, alice, lantern, house_style, second_preset
):
    client.force_login(alice)
    response = client.post(
        reverse("presets:activate", args=[lantern.id, second_preset.pk]), HTTP_HX_REQUEST="true"
    )
    body = response.content.decode()
    assert (
        body.lstrip().startswith('<section id="preset-table"')
        and "Active preset: <strong>Second</strong>" in body
    )


def test_the_database_refuses_two_active_presets_on_one_server(lantern, house_style, second_preset):
    with pytest.raises(IntegrityError), transaction.atomic():
        Preset.objects.filter(pk=second_preset.pk).update(is_active=True)


def test_two_servers_may_each_have_an_active_preset(house_style, harbor_preset):
    assert house_style.is_active and harbor_preset.is_active


@pytest.mark.skipif(not REAL_SERVICES, reason="concurrent transactions need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_two_admins_activating_at_once_leave_exactly_one_active_preset(
    lantern, alice, house_style, second_preset
):
    presets = [house_style, second_preset] * 4
    errors: list[Exception] = []
    barrier = threading.Barrier(len(presets))

    def activate(preset: Preset) -> None:
        try:
            barrier.wait()
            services.preset_activate(preset=preset, by=alice)
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=activate, args=(p,)) for p in presets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(active_names(lantern)) == 1


def test_deactivating_returns_the_server_to_native_assembly(client, alice, lantern, house_style):
    client.force_login(alice)
    client.post(reverse("presets:deactivate", args=[lantern.id, house_style.pk]))
    assert active_names(lantern) == []
    page = client.get(reverse("presets:list", args=[lantern.id])).content.decode()
    assert "No preset is active" in page


def test_deleting_the_active_preset_reverts_to_native_without_promoting_another(
    client, alice, lantern, house_style, second_preset
):
    client.force_login(alice)
    client.post(reverse("presets:delete", args=[lantern.id, house_style.pk]), {"confirmed": "1"})
    assert not Preset.objects.filter(pk=house_style.pk).exists()
    assert not PresetNode.objects.filter(preset_id=house_style.pk).exists()
    assert active_names(lantern) == []
    event = AuditEvent.objects.get(server=lantern, action="preset.delete")
    assert event.detail == {"was_active": True} and event.target_label == "House Style"


def test_alice_renames_a_preset(client, alice, lantern, house_style):
    client.force_login(alice)
    client.post(reverse("presets:rename", args=[lantern.id, house_style.pk]), {"name": "  Cosy Nights "})
    house_style.refresh_from_db()
    assert house_style.name == "Cosy Nights"
    assert AuditEvent.objects.get(action="preset.rename").detail == {
        "from": "House Style",
        "to": "Cosy Nights",
    }


def test_renaming_onto_a_taken_name_says_so_and_changes_nothing(
    client, alice, lantern, house_style, second_preset
):
    client.force_login(alice)
    response = client.post(
        reverse("presets:rename", args=[lantern.id, second_preset.pk]), {"name": "House Style"}, follow=True
    )
    second_preset.refresh_from_db()
    assert second_preset.name == "Second"
    assert "already exists" in response.content.decode()


def test_renaming_to_nothing_is_refused(client, alice, lantern, house_style):
    client.force_login(alice)
    response = client.post(
        reverse("presets:rename", args=[lantern.id, house_style.pk]), {"name": "  "}, follow=True
    )
    house_style.refresh_from_db()
    assert house_style.name == "House Style" and "needs a name" in response.content.decode()


def test_a_harbor_preset_may_share_a_lantern_preset_name(lantern, harbor, alice, charlie, house_style):
    from devtools.factories import make_preset

    services.preset_import(server=harbor, raw=make_preset(), filename="House Style.json", by=charlie)
    assert Preset.objects.filter(name="House Style").count() == 2


def test_alice_sets_the_depth_injection_style(client, alice, lantern, house_style):
    client.force_login(alice)
    client.post(reverse("presets:style", args=[lantern.id, house_style.pk]), {"style": "standalone"})
    house_style.refresh_from_db()
    assert house_style.injection_style == "standalone"


def test_an_unknown_injection_style_is_refused(client, alice, lantern, house_style):
    client.force_login(alice)
    client.post(reverse("presets:style", args=[lantern.id, house_style.pk]), {"style": "sideways"})
    house_style.refresh_from_db()
    assert house_style.injection_style == "merge"


def test_alice_switches_one_node_off_and_on(client, alice, lantern, house_style):
    client.force_login(alice)
    node = house_style.nodes.get(identifier="d4c2b8f1-no-ooc")
    url = reverse("presets:node-toggle", args=[lantern.id, house_style.pk, node.pk])
    client.post(url, {"enabled": "0"})
    node.refresh_from_db()
    assert not node.enabled
    client.post(url, {"enabled": "1"})
    node.refresh_from_db()
    assert node.enabled
    assert AuditEvent.objects.filter(action="preset.node.disable").count() == 1


def test_toggling_with_htmx_returns_the_node_row_and_the_new_header_counts(
    client, alice, lantern, house_style
):
    client.force_login(alice)
    node = house_style.nodes.get(identifier="d4c2b8f1-no-ooc")
    response = client.post(
        reverse("presets:node-toggle", args=[lantern.id, house_style.pk, node.pk]),
        {"enabled": "0"},
        HTTP_HX_REQUEST="true",
    )
    body = response.content.decode().strip()
    row, _, counts = body.partition("</tr>")
    assert row.startswith(f'<tr class="node is-off" id="node-{node.pk}"')
    assert 'id="preset-counts"' in counts and 'hx-swap-oob="true"' in counts
    assert "8 of 10 switchable nodes on" in counts


def test_a_comment_cannot_be_switched_off(client, alice, lantern, house_style):
    client.force_login(alice)
    node = house_style.nodes.get(identifier="c6f1c2a0-house-rules-heading")
    client.post(reverse("presets:node-toggle", args=[lantern.id, house_style.pk, node.pk]), {"enabled": "0"})
    node.refresh_from_db()
    assert node.enabled


def test_the_chat_history_can_be_switched_off_and_on_as_in_sillytavern(client, alice, lantern, house_style):
    client.force_login(alice)
    node = house_style.nodes.get(identifier="chatHistory")
    url = reverse("presets:node-toggle", args=[lantern.id, house_style.pk, node.pk])
    client.post(url, {"enabled": "0"})
    node.refresh_from_db()
    assert not node.enabled
    page = client.get(reverse("presets:detail", args=[lantern.id, house_style.pk])).content.decode()
    assert f'aria-label="Enable {node.name}"' in page
    assert "the bot sends no conversation with this preset" in page
    client.post(url, {"enabled": "1"})
    node.refresh_from_db()
    assert node.enabled
    page = client.get(reverse("presets:detail", args=[lantern.id, house_style.pk])).content.decode()
    assert "the bot sends no conversation" not in page


def test_bulk_disable_with_a_name_filter_touches_only_matching_nodes(client, alice, lantern, house_style):
    client.force_login(alice)
    client.post(
        reverse("presets:nodes-bulk", args=[lantern.id, house_style.pk]),
        {"enabled": "0", "q": "mood", "confirmed": "1"},
    )
    off = set(house_style.nodes.filter(enabled=False).values_list("identifier", flat=True))
    assert off == {"b7e3a9c4-mood-reminder", "e9a5f3d7-drama"}  # drama was already off


def test_bulk_enable_by_kind_switches_on_every_content_node(client, alice, lantern, house_style):
    client.force_login(alice)
    response = client.post(
        reverse("presets:nodes-bulk", args=[lantern.id, house_style.pk]),
        {"enabled": "1", "kind": "content", "confirmed": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert not house_style.nodes.filter(kind="content", enabled=False).exists()
    assert "Enabled 1 node." in response.content.decode()


def test_bulk_disable_of_all_markers_leaves_the_chat_history_on(client, alice, lantern, house_style):
    client.force_login(alice)
    client.post(
        reverse("presets:nodes-bulk", args=[lantern.id, house_style.pk]),
        {"enabled": "0", "kind": "marker", "confirmed": "1"},
    )
    assert list(
        house_style.nodes.filter(kind="marker", enabled=True).values_list("identifier", flat=True)
    ) == ["chatHistory"]


def test_the_node_filter_narrows_the_list(client, alice, lantern, house_style):
    client.force_login(alice)
    response = client.get(reverse("presets:detail", args=[lantern.id, house_style.pk]), {"kind": "marker"})
    identifiers = [n.identifier for n in response.context["nodes"]]
    assert identifiers == [
        "worldInfoBefore",
        "charDescription",
        "charPersonality",
        "dialogueExamples",
        "chatHistory",
    ]


def test_the_node_list_marks_comments_markers_and_depth(client, alice, lantern, house_style):
    client.force_login(alice)
    page = client.get(reverse("presets:detail", args=[lantern.id, house_style.pk])).content.decode()
    assert 'class="node section-heading"' in page and "── House rules ──" in page
    assert "badge kind-marker" in page and "depth 0" in page


def test_alice_downloads_a_fresh_upload_with_its_prompts_and_settings(
    client, alice, lantern, house_style, demo_bytes
):
    client.force_login(alice)
    response = client.get(reverse("presets:download", args=[lantern.id, house_style.pk]))
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    assert 'filename="House Style.json"' in response.headers["Content-Disposition"]
    downloaded, uploaded = json.loads(response.content), json.loads(demo_bytes)
    assert {p["identifier"]: p.get("content", "") for p in downloaded["prompts"]} == {
        p["identifier"]: p.get("content", "") for p in uploaded["prompts"]
    }
    assert downloaded["prompt_order"][-1]["order"] == uploaded["prompt_order"][-1]["order"]
    # every other key as uploaded (the export may add SillyTavern's defaults for keys it rebuilds)
    assert all(downloaded[k] == v for k, v in uploaded.items() if k not in ("prompts", "prompt_order"))


def test_the_download_has_secrets_blanked(client, alice, lantern):
    from devtools.factories import make_preset

    raw = make_preset(reverse_proxy="https://proxy.example/v1", proxy_password="hunter2")
    preset = services.preset_import(server=lantern, raw=raw, filename="p.json", by=alice).preset
    client.force_login(alice)
    body = client.get(reverse("presets:download", args=[lantern.id, preset.pk])).content.decode()
    assert "hunter2" not in body and "proxy.example" not in body


def test_a_preset_of_another_server_is_not_found_under_lantern(client, alice, lantern, harbor_preset):
    client.force_login(alice)
    assert client.get(reverse("presets:detail", args=[lantern.id, harbor_preset.pk])).status_code == 404
    assert client.post(reverse("presets:activate", args=[lantern.id, harbor_preset.pk])).status_code == 404


def test_the_help_page_explains_group_chats(client, charlie):
    client.force_login(charlie)
    page = client.get(reverse("presets:help")).content.decode()
    assert 'id="groups"' in page and "Group chats" in page and "muted" in page and "join prefix" in page


def test_the_help_page_explains_the_differences_to_any_signed_in_user(client, charlie):
    client.force_login(charlie)
    page = client.get(reverse("presets:help")).content.decode()
    for phrase in ("Depth injections", "kept but not applied", "no marker", "HTML", "do not support"):
        assert phrase.lower() in page.lower(), phrase


def test_the_demo_data_gives_the_lantern_guild_one_active_preset_once(lantern):
    from presets.demo import populate

    populate(lantern)
    populate(lantern)
    preset = Preset.objects.get(server=lantern)
    assert preset.is_active and preset.name == "Lantern House Style"
    kinds = set(preset.nodes.values_list("kind", flat=True))
    assert kinds == {"marker", "content", "comment"}
    assert preset.nodes.filter(injection_position=1, injection_depth=0).exists()
    assert preset.nodes.filter(enabled=False).exists()
    assert preset.summary["warnings"] == [] and preset.summary["unsupported_macros"] == []
