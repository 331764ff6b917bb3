"""The lorebooks of a server take part in its assemblies: the API (with the channel's timed state in
the shared cache), the CLI, the preview page, and the pages where admins manage them."""

from __future__ import annotations

import json
import sys
from io import StringIO
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from core.actors import SYSTEM
from lorebooks import services
from lorebooks.models import Lorebook, LorebookEntry

pytestmark = pytest.mark.django_db

LORE = {
    "entries": {
        "0": {
            "key": ["lantern"],
            "comment": "The Lantern",
            "content": "The lantern never goes out.",
            "sticky": 2,
        },
        "1": {"key": ["harbor"], "comment": "Harbor", "content": "Ships wait in the harbor.", "position": 4},
    }
}


def doc(*texts: str, **extra):
    return {
        "names": {"user": "Ann", "char": "Mira"},
        "history": [{"role": "user", "name": "Ann", "content": t} for t in texts],
        **extra,
    }


@pytest.fixture
def lorebook(lantern, alice) -> Lorebook:
    return services.lorebook_import(
        server=lantern, raw=json.dumps(LORE).encode(), filename="Guild Lore.json", by=alice
    ).lorebook


def post(client, body, token):
    return client.post(
        reverse("assembly:api-assemble", args=[1001]),
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def test_the_api_answer_carries_the_activated_entry_and_its_reason(client, api_token, lorebook):
    body = post(client, doc("hello", "where is the lantern?"), api_token).json()
    activated = body["world_info"]["activated"]
    assert [(a["book"], a["uid"], a["reason"]) for a in activated] == [
        ("Guild Lore", 0, 'key "lantern" in message 2')
    ]
    assert any("The lantern never goes out." in m["content"] for m in body["messages"])


def test_an_inactive_lorebook_takes_no_part(
    client, api_token, lorebook, alice, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        services.lorebook_set_active(lorebook=lorebook, active=False, by=alice)
    body = post(client, doc("the lantern"), api_token).json()
    assert body["world_info"]["activated"] == []


def test_a_warm_assemble_with_lorebooks_and_no_channel_makes_no_sql_query(
    client, api_token, lorebook, django_assert_num_queries
):
    assert post(client, doc("the lantern"), api_token).status_code == 200
    with django_assert_num_queries(0):
        response = post(client, doc("the lantern"), api_token)
    assert response.json()["world_info"]["activated"]


def test_the_api_keeps_a_channels_timed_state_between_calls(client, api_token, lorebook):
    context = {"stm_context": {"channel": 555, "user": 1}}
    first = post(client, doc("the lantern", **context, chat_length=10), api_token).json()
    assert first["world_info"]["activated"][0]["reason"].startswith('key "lantern"')
    # no key in the next message: the entry stays because the channel's sticky state was stored
    second = post(client, doc("calm waters", **context, chat_length=11), api_token).json()
    assert [a["reason"] for a in second["world_info"]["activated"]] == ["sticky"]
    # another channel has its own state
    other = post(
        client, doc("calm", stm_context={"channel": 556, "user": 1}, chat_length=11), api_token
    ).json()
    assert other["world_info"]["activated"] == []


def test_writes_invalidate_the_cached_lorebooks(
    client, api_token, lorebook, alice, django_capture_on_commit_callbacks
):
    post(client, doc("the lantern"), api_token)
    entry = LorebookEntry.objects.get(lorebook=lorebook, uid=0)
    with django_capture_on_commit_callbacks(execute=True):
        services.entries_set_enabled(lorebook=lorebook, entry_ids=[entry.pk], enabled=False, by=alice)
    assert post(client, doc("the lantern"), api_token).json()["world_info"]["activated"] == []


def run_assemble(*args: str) -> tuple[int, Any, str]:  # the parsed JSON report (None without one)
    out, err = StringIO(), StringIO()
    real = sys.stderr
    sys.stderr = err
    try:
        call_command("assemble", *args, stdout=out)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.stderr = real
    text = out.getvalue().strip()
    return code, json.loads(text) if text else None, err.getvalue()


def test_the_assemble_cli_prints_world_info_and_the_state_to_pass_back(tmp_path, lorebook):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc("the lantern", chat_length=3)))
    code, result, err = run_assemble("--server", "1001", "--buckets", str(path))
    assert code == 0, err
    state = result["world_info"]["state"]
    assert state and result["world_info"]["activated"][0]["uid"] == 0
    path.write_text(json.dumps(doc("calm", chat_length=4, world_info_state=state)))
    _, again, _ = run_assemble("--server", "1001", "--buckets", str(path))
    assert [a["reason"] for a in again["world_info"]["activated"]] == ["sticky"]


def test_carol_previews_and_sees_why_an_entry_activated(client, carol, lorebook):
    client.force_login(carol)
    document = json.dumps(doc("hi", "the lantern flickers"))
    response = client.post(reverse("assembly:preview-render", args=[1001]), {"document": document})
    assert response.status_code == 200
    page = response.content.decode()
    assert "World Info" in page and "key &quot;lantern&quot; in message 2" in page


# --- pages -------------------------------------------------------------------------------------------


def test_alice_uploads_a_lorebook_and_sees_its_summary(client, alice):
    client.force_login(alice)
    upload = SimpleUploadedFile("Guild Lore.json", json.dumps(LORE).encode(), "application/json")
    response = client.post(reverse("lorebooks:upload", args=[1001]), {"file": upload, "activate": "1"})
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "Imported: what we found" in page and "The Lantern" in page


def test_a_refused_upload_says_what_the_file_is_and_stores_nothing(client, alice):
    client.force_login(alice)
    preset = {"prompts": [{"identifier": "main", "content": "x"}]}
    upload = SimpleUploadedFile("preset.json", json.dumps(preset).encode(), "application/json")
    response = client.post(reverse("lorebooks:upload", args=[1001]), {"file": upload})
    assert response.status_code == 400
    assert "not a lorebook" in response.content.decode()
    assert not Lorebook.objects.exists()


def test_bob_reads_the_lorebook_but_cannot_change_it(client, bob, lorebook):
    client.force_login(bob)
    assert client.get(reverse("lorebooks:detail", args=[1001, lorebook.pk])).status_code == 200
    entry = lorebook.entries.first()
    assert (
        client.post(reverse("lorebooks:entry-toggle", args=[1001, lorebook.pk, entry.pk])).status_code == 403
    )
    assert client.post(reverse("lorebooks:deactivate", args=[1001, lorebook.pk])).status_code == 403
    assert client.post(reverse("lorebooks:settings", args=[1001]), {"scan_depth": "9"}).status_code == 403
    lorebook.refresh_from_db()
    assert lorebook.is_active and all(e.enabled for e in lorebook.entries.all())


def test_charlie_cannot_see_the_guilds_lorebooks(client, charlie, lorebook):
    client.force_login(charlie)
    assert client.get(reverse("lorebooks:list", args=[1001])).status_code == 404
    assert client.get(reverse("lorebooks:detail", args=[1001, lorebook.pk])).status_code == 404


def test_alice_disables_matching_entries_in_bulk(client, alice, lorebook):
    client.force_login(alice)
    client.post(
        reverse("lorebooks:entries-bulk", args=[1001, lorebook.pk]),
        {"q": "harbor", "enabled": "0", "confirmed": "1"},
    )
    assert dict(lorebook.entries.values_list("uid", "enabled")) == {0: True, 1: False}


def test_the_entry_filter_narrows_by_position(client, carol, lorebook):
    client.force_login(carol)
    page = client.get(reverse("lorebooks:detail", args=[1001, lorebook.pk]) + "?show=4").content.decode()
    assert "Harbor" in page and "The Lantern" not in page.split('id="entry-list"')[1]


def test_the_export_downloads_a_sillytavern_file_with_the_same_entries(client, alice, lorebook):
    client.force_login(alice)
    response = client.get(reverse("lorebooks:download", args=[1001, lorebook.pk]) + "?as=export")
    exported = json.loads(response.content)
    assert set(exported["entries"]) == {"0", "1"}
    assert exported["entries"]["0"]["content"] == "The lantern never goes out."
    original = client.get(reverse("lorebooks:download", args=[1001, lorebook.pk]))
    assert json.loads(original.content) == LORE


def test_alice_changes_the_world_info_settings(client, alice):
    client.force_login(alice)
    form = {
        "scan_depth": "6",
        "budget_percent": "30",
        "budget_cap": "0",
        "context_size": "8000",
        "max_recursion": "2",
        "min_activations": "0",
        "min_activations_depth_max": "0",
        "recursive": "1",
        "strategy": "global_first",
    }
    client.post(reverse("lorebooks:settings", args=[1001]), form)
    from lorebooks.selectors import world_info_settings

    settings = world_info_settings(1001)
    assert (settings.scan_depth, settings.max_recursion, settings.strategy) == (6, 2, "global_first")
    assert settings.match_whole_words is False  # an unticked box is off


def test_a_fresh_process_assembles_from_the_stored_compiled_book_without_reading_entries(
    client, api_token, lorebook
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from lorebooks.models import CompiledLorebook

    assert CompiledLorebook.objects.filter(lorebook=lorebook).exists()
    with CaptureQueriesContext(connection) as queries:
        body = post(client, doc("where is the lantern?"), api_token).json()
    assert [a["uid"] for a in body["world_info"]["activated"]] == [0]
    assert not [q["sql"] for q in queries.captured_queries if "lorebookentry" in q["sql"].lower()]


def test_disabling_an_entry_rewrites_the_compiled_book_the_bot_uses(
    client, api_token, lorebook, alice, django_capture_on_commit_callbacks
):
    lantern_entry = lorebook.entries.get(uid=0)
    with django_capture_on_commit_callbacks(execute=True):
        services.entries_set_enabled(lorebook=lorebook, entry_ids=[lantern_entry.pk], enabled=False, by=alice)
    from lorebooks.cache import clear_local

    clear_local()
    body = post(client, doc("the lantern by the harbor"), api_token).json()
    assert [a["uid"] for a in body["world_info"]["activated"]] == [1]


def test_a_lorebook_stored_before_compiled_forms_existed_still_takes_part(client, api_token, lorebook):
    from lorebooks.models import CompiledLorebook

    CompiledLorebook.objects.filter(lorebook=lorebook).delete()
    body = post(client, doc("where is the lantern?"), api_token).json()
    assert [a["uid"] for a in body["world_info"]["activated"]] == [0]


def test_carol_pages_through_a_large_lorebook_two_hundred_entries_at_a_time(client, carol, lantern):
    many = {"entries": {str(i): {"key": [f"k{i}"], "comment": f"Entry {i}"} for i in range(450)}}
    big = services.lorebook_import(
        server=lantern, raw=json.dumps(many).encode(), filename="Many.json", by=SYSTEM
    ).lorebook
    client.force_login(carol)
    url = reverse("lorebooks:detail", args=[1001, big.pk])
    first = client.get(url).content.decode()
    assert first.count("data-uid=") == 200 and "450 entries in all" not in first  # carol cannot bulk edit
    assert "Entries 1–200 of 450" in first and 'href="?page=2#entries"' in first
    last = client.get(url + "?page=3").content.decode()
    assert last.count("data-uid=") == 50 and "Entry 449" in last and 'rel="next"' not in last
    filtered = client.get(url + "?q=Entry+44&page=2").content.decode()
    assert "Entry 44" in filtered and "page=" not in filtered.split('id="entry-list"')[1]


def test_an_entry_with_thousands_of_keys_lists_the_first_fifty(client, alice, lantern):
    keys = [f"word{i}" for i in range(5000)]
    huge = {"entries": {"0": {"key": keys, "comment": "Many keys", "content": "Found."}}}
    lorebook = services.lorebook_import(
        server=lantern, raw=json.dumps(huge).encode(), filename="Keys.json", by=SYSTEM
    )
    client.force_login(alice)
    page = client.get(reverse("lorebooks:detail", args=[1001, lorebook.lorebook.pk])).content.decode()
    assert "<code>word49</code>" in page and "word50<" not in page
    assert "and 4950 more (in the download)" in page


def test_alice_disables_every_entry_then_enables_one_and_the_bot_sees_exactly_that(
    client, api_token, lorebook, alice, django_capture_on_commit_callbacks
):
    ids = list(lorebook.entries.values_list("pk", flat=True))
    harbor = lorebook.entries.get(uid=1)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.entries_set_enabled(lorebook=lorebook, entry_ids=ids, enabled=False, by=alice) == 2
    assert post(client, doc("the lantern by the harbor"), api_token).json()["world_info"]["activated"] == []
    with django_capture_on_commit_callbacks(execute=True):
        services.entries_set_enabled(lorebook=lorebook, entry_ids=[harbor.pk], enabled=True, by=alice)
    body = post(client, doc("the lantern by the harbor"), api_token).json()
    assert [a["uid"] for a in body["world_info"]["activated"]] == [1]
    assert dict(lorebook.entries.values_list("uid", "enabled")) == {0: False, 1: True}
    client.force_login(alice)
    exported = client.get(reverse("lorebooks:download", args=[1001, lorebook.pk]) + "?as=export")
    assert [e["disable"] for e in json.loads(exported.content)["entries"].values()] == [True, False]


def test_disabling_matching_entries_asks_first_with_the_count(client, alice, lorebook):
    client.force_login(alice)
    url = reverse("lorebooks:entries-bulk", args=[1001, lorebook.pk])
    asked = client.post(url, {"q": "harbor", "enabled": "0"}).content.decode()
    assert "Disable 1 entry of" in asked and 'name="q" value="harbor"' in asked
    assert all(lorebook.entries.values_list("enabled", flat=True))


def test_deleting_a_lorebook_asks_first_and_says_its_entries_go_with_it(client, alice, lorebook):
    client.force_login(alice)
    url = reverse("lorebooks:delete", args=[1001, lorebook.pk])
    asked = client.post(url, HTTP_HX_REQUEST="true")
    assert asked["HX-Retarget"] == "#main" and "Its entries go with it" in asked.content.decode()
    assert Lorebook.objects.filter(pk=lorebook.pk).exists()
    client.post(url, {"confirmed": "1"})
    assert not Lorebook.objects.filter(pk=lorebook.pk).exists()
