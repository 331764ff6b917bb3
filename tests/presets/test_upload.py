"""Uploading presets through the page: summary, errors, name clashes, replace and keep both."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from devtools.factories import make_preset
from presets.models import Preset, PresetNode
from servers.models import AuditEvent
from tests.presets.conftest import upload

pytestmark = pytest.mark.django_db


def test_alice_uploads_a_preset_and_lands_on_its_summary(client, alice, lantern, demo_bytes):
    client.force_login(alice)
    response = upload(client, lantern.id, demo_bytes, "Lantern House.json")
    preset = Preset.objects.get(server=lantern)
    assert response.status_code == 302
    assert response.url == reverse("presets:detail", args=[lantern.id, preset.pk]) + "?imported=1"
    page = client.get(response.url).content.decode()
    assert "Imported: what we found" in page
    assert 'data-testid="import-summary"' in page and reverse("presets:help") in page
    assert preset.name == "Lantern House" and preset.node_count == 12


def test_a_fresh_upload_becomes_the_active_preset(client, alice, lantern, demo_bytes):
    client.force_login(alice)
    upload(client, lantern.id, demo_bytes)
    assert Preset.objects.get(server=lantern).is_active


def test_unticking_activate_stores_the_preset_inactive(client, alice, lantern, demo_bytes):
    client.force_login(alice)
    upload(client, lantern.id, demo_bytes, activate="")
    assert not Preset.objects.get(server=lantern).is_active


def test_a_new_active_upload_takes_over_from_the_previous_active_preset(client, alice, lantern, house_style):
    client.force_login(alice)
    upload(client, lantern.id, make_preset(("x", "X.", True)), "Newer.json")
    assert list(Preset.objects.filter(server=lantern, is_active=True).values_list("name", flat=True)) == [
        "Newer"
    ]


def test_the_form_name_overrides_the_file_name(client, alice, lantern, demo_bytes):
    client.force_login(alice)
    upload(client, lantern.id, demo_bytes, "whatever.json", name="  Friday Night  ")
    assert Preset.objects.get(server=lantern).name == "Friday Night"


def test_the_summary_lists_sampler_settings_and_the_depth_injection(client, alice, lantern, house_style):
    client.force_login(alice)
    page = client.get(reverse("presets:detail", args=[lantern.id, house_style.pk])).content.decode()
    assert "Sampler settings" in page and "temperature" in page
    assert "depth 0" in page


def test_a_character_card_is_refused_inline_and_nothing_is_stored(client, alice, lantern):
    client.force_login(alice)
    card = json.dumps({"spec": "chara_card_v2", "data": {"name": "Seraphina", "first_mes": "Hi"}}).encode()
    response = upload(client, lantern.id, card, "seraphina.json")
    assert response.status_code == 400
    assert "character card" in response.context["error"].lower()
    assert 'data-testid="upload-error"' in response.content.decode()
    assert not Preset.objects.exists()


def test_broken_json_is_refused_with_its_line_and_column(client, alice, lantern):
    client.force_login(alice)
    response = upload(client, lantern.id, b'{\n  "prompts": [,]\n}', "broken.json")
    assert response.status_code == 400
    assert "line 2" in response.context["error"]


def test_a_file_over_the_limit_is_refused_with_413(client, alice, lantern, settings):
    settings.PRESET_MAX_BYTES = 1024
    client.force_login(alice)
    response = upload(client, lantern.id, make_preset(("big", "x" * 2000, True)), "big.json")
    assert response.status_code == 413
    assert "MiB" in response.context["error"] or "limit" in response.context["error"]
    assert not Preset.objects.exists()


def test_a_body_declared_larger_than_the_limit_is_refused_before_it_is_read(client, alice, lantern, settings):
    settings.PRESET_MAX_BYTES = 1024
    client.force_login(alice)
    response = client.generic(
        "POST",
        reverse("presets:upload", args=[lantern.id]),
        data=b"x" * 10,
        content_type="multipart/form-data; boundary=zzz",
        HTTP_CONTENT_LENGTH=str(10 * 1024 * 1024),
    )
    assert response.status_code == 413


def test_uploading_without_a_file_asks_for_one(client, alice, lantern):
    client.force_login(alice)
    response = client.post(reverse("presets:upload", args=[lantern.id]), {"activate": "1"})
    assert response.status_code == 400 and "Choose" in response.context["error"]


def test_a_name_clash_asks_alice_to_choose_and_keeps_the_existing_preset(client, alice, lantern, house_style):
    client.force_login(alice)
    response = upload(client, lantern.id, make_preset(("x", "X.", True)), "House Style.json")
    assert response.status_code == 409 and response.context["clash"]
    assert "replace" in response.context["error"]
    assert Preset.objects.get(server=lantern).node_count == house_style.node_count


def test_keep_both_numbers_the_new_preset(client, alice, lantern, house_style, demo_bytes):
    client.force_login(alice)
    upload(client, lantern.id, demo_bytes, "House Style.json", on_clash="keep_both")
    upload(client, lantern.id, demo_bytes, "House Style.json", on_clash="keep_both")
    names = sorted(Preset.objects.filter(server=lantern).values_list("name", flat=True))
    assert names == ["House Style", "House Style (2)", "House Style (3)"]


def test_replacing_keeps_the_active_flag_and_carries_node_choices_over(
    client, alice, lantern, house_style, demo_bytes
):
    client.force_login(alice)
    tone = house_style.nodes.get(identifier="a1d0e6b2-tone")
    tone.enabled = False
    tone.save()
    response = upload(
        client, lantern.id, demo_bytes, "House Style.json", on_clash="replace", confirm="1", activate=""
    )
    new = Preset.objects.get(server=lantern)
    assert new.pk != house_style.pk and new.is_active
    assert not new.nodes.get(identifier="a1d0e6b2-tone").enabled
    assert new.carried_over == 10
    assert "10 node choices" in client.get(response.url).content.decode()
    assert not PresetNode.objects.filter(preset_id=house_style.pk).exists()


def test_replacing_an_inactive_preset_keeps_it_inactive(client, alice, lantern, house_style, second_preset):
    client.force_login(alice)
    upload(
        client,
        lantern.id,
        make_preset(("rules", "New rules.", True)),
        "Second.json",
        on_clash="replace",
        confirm="1",
    )
    assert not Preset.objects.get(server=lantern, name="Second").is_active
    assert Preset.objects.get(server=lantern, name="House Style").is_active


def test_an_upload_records_an_audit_event(client, alice, lantern, demo_bytes):
    client.force_login(alice)
    upload(client, lantern.id, demo_bytes)
    assert AuditEvent.objects.filter(server=lantern, actor=alice, action="preset.import").exists()


def test_an_htmx_upload_redirects_through_hx_redirect(client, alice, lantern, demo_bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(alice)
    response = client.post(
        reverse("presets:upload", args=[lantern.id]),
        {"file": SimpleUploadedFile("a.json", demo_bytes), "activate": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 204
    assert response.headers["HX-Redirect"].endswith("?imported=1")


def test_an_htmx_upload_error_comes_back_as_the_result_partial(client, alice, lantern):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(alice)
    response = client.post(
        reverse("presets:upload", args=[lantern.id]),
        {"file": SimpleUploadedFile("a.json", b"[1, 2]"), "activate": "1"},
        HTTP_HX_REQUEST="true",
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="upload-result"') and "<html" not in body


def test_preset_text_with_html_is_escaped_on_the_page(client, alice, lantern):
    client.force_login(alice)
    raw = make_preset(("xss", "<script>alert(1)</script><img src=x onerror=alert(2)>", True))
    response = upload(client, lantern.id, raw, "x.json", name="<b>bold</b>")
    page = client.get(response.url).content.decode()
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert "&lt;script&gt;" in page and "&lt;b&gt;bold&lt;/b&gt;" in page


@pytest.fixture
def node_writes_fail(django_db_blocker):
    """The database itself refuses new preset nodes (a trigger), as a full disk or a lost connection would."""
    from django.db import connection

    if connection.vendor == "postgresql":
        create = [
            "CREATE FUNCTION tk_refuse_nodes() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'disk full'; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER tk_refuse_nodes BEFORE INSERT ON presets_presetnode "
            "FOR EACH ROW EXECUTE FUNCTION tk_refuse_nodes()",
        ]
        drop = ["DROP TRIGGER tk_refuse_nodes ON presets_presetnode", "DROP FUNCTION tk_refuse_nodes()"]
    else:
        create = [
            "CREATE TRIGGER tk_refuse_nodes BEFORE INSERT ON presets_presetnode "
            "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
        ]
        drop = ["DROP TRIGGER tk_refuse_nodes"]
    with connection.cursor() as cursor:
        for statement in create:
            cursor.execute(statement)
    yield
    with connection.cursor() as cursor:
        for statement in drop:
            cursor.execute(statement)


def test_a_failure_while_storing_nodes_leaves_the_replaced_preset_untouched(
    lantern, alice, house_style, node_writes_fail
):
    from presets import services

    # PostgreSQL writes nodes with COPY, whose errors come straight from the driver.
    with pytest.raises(Exception, match="disk full"):
        services.preset_import(
            server=lantern, raw=make_preset(), filename="House Style.json", on_clash="replace", by=alice
        )
    survivor = Preset.objects.get(server=lantern)
    assert survivor.pk == house_style.pk and survivor.is_active and survivor.nodes.count() == 12
    assert not AuditEvent.objects.filter(action="preset.replace").exists()


def test_awkward_text_and_triggers_are_stored_exactly(lantern, alice):
    from presets import services

    awkward = 'tab\there\nnew line \\N backslash \\ and \\\\ {"json": [1]} ✨ 中文 \r end'
    raw = json.dumps(
        {
            "prompts": [
                {
                    "identifier": "main",
                    "name": "Main",
                    "content": awkward,
                    "injection_trigger": ["normal", "continue"],
                },
                {"identifier": "chatHistory", "name": "Chat History", "marker": True},
            ],
            "prompt_order": [
                {
                    "character_id": 100001,
                    "order": [
                        {"identifier": "main", "enabled": True},
                        {"identifier": "chatHistory", "enabled": True},
                    ],
                }
            ],
        }
    ).encode()
    preset = services.preset_import(server=lantern, raw=raw, filename="awkward.json", by=alice).preset
    main = preset.nodes.get(identifier="main")
    assert main.content == awkward
    assert main.injection_trigger == ["normal", "continue"]
    assert main.enabled is True and main.forbid_overrides is False and main.position == 0


def test_replacing_recounts_the_summary_for_the_carried_over_choices(
    client, alice, lantern, house_style, demo_bytes
):
    client.force_login(alice)
    marker = house_style.nodes.get(identifier="charDescription")
    marker.enabled = False
    marker.save()
    upload(client, lantern.id, demo_bytes, "House Style.json", on_clash="replace", confirm="1")
    new = Preset.objects.get(server=lantern)
    hidden = " ".join(new.summary["hidden_blocks"])
    assert "charDescription" in hidden
