"""The cleaning API for the bot and the dashboard pages: who may do what (docs/presets.md#who-may-do-what),
what they show."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from regex_scripts.models import PresetScriptSwitch, ServerScript
from servers.models import AuditEvent
from tests.regex_scripts.conftest import run_cli, script

pytestmark = pytest.mark.django_db


def clean(client, server_id: int, token: str, body: dict):
    return client.post(
        reverse("regex_scripts:api-clean", args=[server_id]),
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def test_the_bot_gets_a_reply_without_its_think_block(client, lantern, api_token, import_preset):
    import_preset("Bot", script("/!+/g", "!", name="One bang"))
    answer = clean(client, lantern.id, api_token, {"text": "<think>plan</think>Hello!!!", "seed": 1})
    assert answer.status_code == 200
    assert answer.json() == {
        "stored": "Hello!",
        "display": "Hello!",
        "reasoning": "plan",
        "applied": [{"script": "One bang", "id": "/!+/g", "where": "stored"}],
        "errors": [],
    }


def test_the_api_renders_the_names_it_is_given_in_replacements(client, lantern, api_token, import_preset):
    import_preset("Names", script("/me/", "{{user}} and {{char}}"))
    body = {"text": "me", "names": {"user": "Ann", "char": "Nemo"}}
    assert clean(client, lantern.id, api_token, body).json()["stored"] == "Ann and Nemo"


def test_the_api_refuses_a_body_without_text_in_one_sentence(client, lantern, api_token):
    answer = clean(client, lantern.id, api_token, {"kind": "reply"})
    assert answer.status_code == 400 and "`text`" in answer.json()["error"]


def test_another_servers_token_gets_404(client, lantern, harbor, api_token):
    assert clean(client, harbor.id, api_token, {"text": "x"}).status_code == 404


def test_alice_uploads_an_export_and_sees_the_inactive_reason(client, alice, lantern):
    client.force_login(alice)
    export = json.dumps([script("/fine/"), script("/(?<no/", name="Broken one")]).encode()
    response = client.post(
        reverse("regex_scripts:upload", args=[lantern.id]),
        {"file": SimpleUploadedFile("export.json", export, "application/json")},
        follow=True,
    )
    page = response.content.decode()
    assert "Imported 2 scripts; 1 will not run" in page
    assert "Broken one" in page and "Not a valid JavaScript regular expression" in page
    assert AuditEvent.objects.filter(server=lantern, action="regex.import", actor=alice).exists()


def test_alice_reorders_edits_switches_and_deletes_her_scripts(client, alice, lantern, tmp_path):
    export = tmp_path / "two.json"
    export.write_text(json.dumps([script("/first/", name="First"), script("/second/", name="Second")]))
    run_cli("import", str(export), "--server", str(lantern.id), "--json")
    first, second = ServerScript.objects.order_by("position")
    client.force_login(alice)
    client.post(reverse("regex_scripts:move", args=[lantern.id, second.pk]), {"direction": "up"})
    assert [str(s) for s in ServerScript.objects.order_by("position")] == ["Second", "First"]
    client.post(
        reverse("regex_scripts:edit", args=[lantern.id, first.pk]),
        {"scriptName": "First, edited", "findRegex": "/1st/g", "placement": ["2"], "substituteRegex": "0"},
    )
    first.refresh_from_db()
    assert (first.data["scriptName"], first.data["findRegex"], first.data["id"]) == (
        "First, edited",
        "/1st/g",
        "/first/",
    )
    client.post(reverse("regex_scripts:toggle", args=[lantern.id, first.pk]), {"enabled": "0"})
    _, out, _ = run_cli("apply", "--server", str(lantern.id), "--reply", "--json", stdin=b"1st second")
    assert out["stored"] == "1st "
    asked = client.post(reverse("regex_scripts:delete", args=[lantern.id, second.pk])).content.decode()
    assert "Delete the regex script" in asked and ServerScript.objects.filter(pk=second.pk).exists()
    client.post(reverse("regex_scripts:delete", args=[lantern.id, second.pk]), {"confirmed": "1"})
    assert list(ServerScript.objects.values_list("pk", flat=True)) == [first.pk]
    actions = set(AuditEvent.objects.filter(server=lantern, actor=alice).values_list("action", flat=True))
    assert {"regex.move", "regex.edit", "regex.disable", "regex.delete"} <= actions


def test_the_preset_page_lists_its_scripts_with_flags_depth_and_status(client, bob, lantern, import_preset):
    preset = import_preset(
        "Shown",
        script("/hide me/gi", name="Hider", minDepth=2, maxDepth=5, markdownOnly=True),
        script("/(?<x/", name="Bad"),
    )
    client.force_login(bob)
    page = client.get(reverse("regex_scripts:preset", args=[lantern.id, preset.pk])).content.decode()
    assert "Hider" in page and "hide me" in page and "gi" in page and "2–5" in page and "display only" in page
    assert "Bad" in page and "inactive" in page
    assert "turn off" not in page  # bob reads, only admins switch


def test_switching_off_a_preset_script_stops_it_for_this_server(client, alice, lantern, import_preset):
    preset = import_preset("Switch", script("/a/", "b", id="the-script"))
    client.force_login(alice)
    client.post(
        reverse("regex_scripts:preset-toggle", args=[lantern.id, preset.pk]),
        {"key": "the-script", "enabled": "0"},
    )
    assert PresetScriptSwitch.objects.get(preset=preset).enabled is False
    assert run_cli("apply", "--server", str(lantern.id), "--reply", "--json", stdin=b"a")[1]["stored"] == "a"


def test_a_server_can_switch_on_a_script_the_file_disables(
    client, alice, lantern, import_preset, django_capture_on_commit_callbacks
):
    preset = import_preset("Off", script("/a/", "b", id="off-script", disabled=True))
    assert run_cli("apply", "--server", str(lantern.id), "--reply", "--json", stdin=b"a")[1]["stored"] == "a"
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("regex_scripts:preset-toggle", args=[lantern.id, preset.pk]),
            {"key": "off-script", "enabled": "1"},
        )
    assert run_cli("apply", "--server", str(lantern.id), "--reply", "--json", stdin=b"a")[1]["stored"] == "b"


def test_bob_cannot_upload_scripts(client, bob, lantern):
    client.force_login(bob)
    response = client.post(
        reverse("regex_scripts:upload", args=[lantern.id]),
        {"file": SimpleUploadedFile("e.json", b'{"findRegex": "x"}', "application/json")},
    )
    assert response.status_code == 403 and not ServerScript.objects.exists()


def test_charlie_cannot_see_the_lantern_scripts(client, charlie, lantern):
    client.force_login(charlie)
    assert client.get(reverse("regex_scripts:list", args=[lantern.id])).status_code == 404


def test_carol_tests_a_reply_and_sees_stored_display_and_reasoning(client, carol, lantern, import_preset):
    import_preset("Tester", script("/<b>(.*?)<\\/b>/g", "**$1**", markdownOnly=True, name="Bold"))
    client.force_login(carol)
    page = client.post(
        reverse("regex_scripts:tester", args=[lantern.id]),
        {"text": "<think>why</think>A <b>bold</b> move", "kind": "reply"},
    ).content.decode()
    assert "A **bold** move" in page  # display
    assert "A &lt;b&gt;bold&lt;/b&gt; move" in page  # stored, escaped
    assert "why" in page and "Bold" in page


def test_carol_picks_the_tester_preset_from_the_servers_presets(client, carol, lantern, import_preset):
    import_preset("Active one", script("/x/g", "y", name="X"))
    import_preset("Quiet one", script("/<b>(.*?)<\\/b>/g", "**$1**", markdownOnly=True), activate=False)
    client.force_login(carol)
    url = reverse("regex_scripts:tester", args=[lantern.id])
    page = client.get(url).content.decode()
    assert '<select name="preset"' in page
    assert '<option value="Quiet one">Quiet one</option>' in page
    chosen = client.post(url, {"text": "A <b>bold</b> x", "kind": "reply", "preset": "Quiet one"})
    assert "A **bold** x" in chosen.content.decode()
    unknown = client.post(url, {"text": "hi", "kind": "reply", "preset": "Nobody's"})
    assert unknown.status_code == 400
