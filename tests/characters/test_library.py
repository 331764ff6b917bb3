"""The server's character cards: import through the command line and the pages, one active card,
roles, downloads that read back, and the bot API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from characters import cache as card_cache
from characters import services
from characters.models import Card as CardRow
from engine.cards import Card, read_card
from engine.st_format import ImportRefused
from servers.models import AuditEvent
from servers.services import api_token_create
from tests.corpus import CORPUS, needs_corpus
from tests.engine.cards.test_reader import V2

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def active_card(server_id: int) -> Card:
    """The card the bot plays on the server; the test fails when there is none."""
    card = card_cache.get_active_card(server_id)
    assert card is not None, "no active card"
    return card


def card_json(**data) -> bytes:
    return json.dumps({**V2, "data": {**V2["data"], **data}}).encode()


def test_an_imported_card_becomes_the_only_active_character(lantern, alice):
    first = services.card_import(server=lantern, raw=card_json(name="Mira"), filename="m.json", by=alice)
    second = services.card_import(server=lantern, raw=card_json(name="Tomas"), filename="t.json", by=alice)
    assert list(CardRow.objects.filter(server=lantern, is_active=True).values_list("pk", flat=True)) == [
        second.row.pk
    ]
    assert first.lorebook_entries == 1
    assert AuditEvent.objects.filter(server=lantern, action="card.import").count() == 2


def test_a_name_clash_stops_the_import_unless_replace_or_keep_both_is_chosen(lantern, alice):
    services.card_import(server=lantern, raw=card_json(), filename="m.json", by=alice)
    with pytest.raises(services.CardNameClash):
        services.card_import(server=lantern, raw=card_json(), filename="m.json", by=alice)
    kept = services.card_import(
        server=lantern, raw=card_json(), filename="m.json", on_clash="keep_both", by=alice
    )
    assert kept.row.name == "Mira (2)"


def test_a_refused_file_stores_nothing(lantern, alice):
    with pytest.raises(ImportRefused):
        services.card_import(server=lantern, raw=b'{"entries": {}}', filename="book.json", by=alice)
    assert not CardRow.objects.exists()


def test_the_active_card_is_served_from_the_cache_without_queries(lantern, alice, django_assert_num_queries):
    services.card_import(server=lantern, raw=card_json(), filename="m.json", by=alice)
    assert active_card(lantern.pk).name == "Mira"
    with django_assert_num_queries(0):
        assert active_card(lantern.pk).scenario == "A storm at sea."


def test_deactivating_the_card_is_seen_by_the_next_read(lantern, alice, django_capture_on_commit_callbacks):
    result = services.card_import(server=lantern, raw=card_json(), filename="m.json", by=alice)
    card_cache.get_active_card(lantern.pk)
    with django_capture_on_commit_callbacks(execute=True):
        services.card_deactivate(card=result.row, by=alice)
    assert card_cache.get_active_card(lantern.pk) is None


def test_alice_uploads_a_png_card_and_downloads_it_back_as_png_and_json(client, lantern, alice):
    png = read_card(card_json()).card
    from engine.cards import card_png

    client.force_login(alice)
    response = client.post(
        reverse("characters:upload", args=[lantern.pk]),
        {"file": SimpleUploadedFile("mira.png", card_png(png), "image/png"), "activate": "on"},
    )
    row = CardRow.objects.get(server=lantern)
    assert response.status_code == 302 and row.is_active and row.avatar
    page = client.get(reverse("characters:detail", args=[lantern.pk, row.pk])).content.decode()
    assert "Mira speaks softly." in page and "replaces the preset&#x27;s main prompt text" in page
    again = client.get(reverse("characters:download-png", args=[lantern.pk, row.pk]))
    assert again["Content-Type"] == "image/png" and read_card(again.content).card.name == "Mira"
    as_json = client.get(reverse("characters:download-json", args=[lantern.pk, row.pk]))
    assert json.loads(as_json.content)["spec"] == "chara_card_v3"


def test_card_text_with_html_is_shown_as_text(client, lantern, alice):
    services.card_import(
        server=lantern, raw=card_json(description="<script>alert(1)</script>"), filename="m.json", by=alice
    )
    client.force_login(alice)
    row = CardRow.objects.get(server=lantern)
    page = client.get(reverse("characters:detail", args=[lantern.pk, row.pk])).content.decode()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page


def test_bob_the_moderator_reads_cards_but_cannot_upload_or_switch_them(client, lantern, alice, bob):
    result = services.card_import(server=lantern, raw=card_json(), filename="m.json", by=alice)
    client.force_login(bob)
    assert client.get(reverse("characters:list", args=[lantern.pk])).status_code == 200
    assert client.post(reverse("characters:deactivate", args=[lantern.pk, result.row.pk])).status_code == 403
    upload = {"file": SimpleUploadedFile("m.json", card_json(name="Other"), "application/json")}
    assert client.post(reverse("characters:upload", args=[lantern.pk]), upload).status_code == 403
    assert CardRow.objects.get(pk=result.row.pk).is_active


def test_charlie_cannot_see_another_servers_cards(client, lantern, charlie):
    client.force_login(charlie)
    assert client.get(reverse("characters:list", args=[lantern.pk])).status_code == 404


def test_the_bot_reads_the_active_cards_fields(client, lantern, alice):
    services.card_import(server=lantern, raw=card_json(), filename="m.json", by=alice)
    _, token = api_token_create(server=lantern, name="bot", by=alice)
    answer = client.get(
        reverse("characters:api-active-card", args=[lantern.pk]), HTTP_AUTHORIZATION=f"Bearer {token}"
    ).json()
    assert answer["card"]["name"] == "Mira" and answer["card"]["depth_prompt"]["depth"] == 2
    assert answer["card"]["has_lorebook"] is True


def cli(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    env = {"DATABASE_URL": f"sqlite:///{db}", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "manage.py", "card", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def migrated_db(tmp_path) -> Path:
    db = tmp_path / "cards.sqlite3"
    env = {"DATABASE_URL": f"sqlite:///{db}", "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    return db


@needs_corpus
def test_the_command_line_imports_both_corpus_cards_and_refuses_a_lorebook(migrated_db, tmp_path):
    for name in ("prolix-cipher-v3.json", "prolix-lumia.json"):
        done = cli("import", str(CORPUS / "cards" / name), "--server", "5", "--json", db=migrated_db)
        report = json.loads(done.stdout)
        assert done.returncode == 0 and report["spec"] == "chara_card_v3" and report["lorebook"] is None
        assert "name" in report["fields"] and "description" in report["fields"]
    with_book = tmp_path / "mira.json"
    with_book.write_bytes(card_json())
    report = json.loads(
        cli("import", str(with_book), "--server", "5", "--name", "Mira here", "--json", db=migrated_db).stdout
    )
    assert report["name"] == "Mira here" and report["lorebook"] == {"entries": 1}
    refused = cli(
        "import",
        str(CORPUS / "worldinfo" / "st-Eldoria-newer.json"),
        "--server",
        "5",
        "--json",
        db=migrated_db,
    )
    assert refused.returncode == 2 and refused.stdout == "" and len(refused.stderr.strip().splitlines()) == 1
    assert "lorebook" in refused.stderr


def test_the_active_cards_regex_scripts_clean_a_reply_after_the_servers_own(lantern, alice):
    from regex_scripts.selectors import clean_for_server

    scripts = [
        {
            "id": "c1",
            "scriptName": "Card hides OOC",
            "findRegex": "/\\(OOC:[^)]*\\)/g",
            "replaceString": "",
            "placement": [2],
        },
    ]
    raw = card_json(extensions={"regex_scripts": scripts})
    services.card_import(server=lantern, raw=raw, filename="m.json", by=alice)
    cleaned = clean_for_server(server_id=lantern.pk, text="Evening. (OOC: brb) The lamp is lit.", seed=1)
    assert cleaned.stored == "Evening.  The lamp is lit."
    assert [a.script for a in cleaned.applied] == ["Card hides OOC"]


def test_the_active_cards_book_takes_part_in_world_info_as_the_character_book(lantern, alice):
    from assembly.selectors import assemble_for_server
    from engine import parse_buckets

    services.card_import(server=lantern, raw=card_json(), filename="m.json", by=alice)
    doc = parse_buckets({"history": [{"role": "user", "content": "Is the lamp still working?"}]})
    result = assemble_for_server(server_id=lantern.pk, doc=doc, native=True, seed=1)
    activated = result.to_dict()["world_info"]["activated"]
    assert [(a["book"], a["reason"]) for a in activated] == [("Mira (card)", 'key "lamp" in message 1')]
    assert any("The lamp is old." in m.content for m in result.messages)


def test_alice_deactivates_and_deletes_a_card_from_its_own_page(client, lantern, alice):
    row = services.card_import(server=lantern, raw=card_json(name="Mira"), filename="m.json", by=alice).row
    client.force_login(alice)
    detail = reverse("characters:detail", args=[lantern.pk, row.pk])
    page = client.get(detail).content.decode()
    assert ">Deactivate</button>" in page and ">Delete</button>" in page
    response = client.post(reverse("characters:deactivate", args=[lantern.pk, row.pk]), {"next": "detail"})
    assert response.status_code == 302 and response["Location"] == detail  # back on the card's page
    assert ">Activate</button>" in client.get(detail).content.decode()
    response = client.post(
        reverse("characters:delete", args=[lantern.pk, row.pk]), {"next": "list", "confirmed": "1"}
    )
    assert response["Location"] == reverse("characters:list", args=[lantern.pk])
    assert not CardRow.objects.filter(pk=row.pk).exists()


def test_deleting_a_card_from_its_page_with_htmx_sends_the_browser_to_the_list(client, lantern, alice):
    row = services.card_import(server=lantern, raw=card_json(name="Mira"), filename="m.json", by=alice).row
    client.force_login(alice)
    response = client.post(
        reverse("characters:delete", args=[lantern.pk, row.pk]),
        {"next": "list", "confirmed": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert response["HX-Redirect"] == reverse("characters:list", args=[lantern.pk])


def test_bob_sees_no_card_actions_on_its_page(client, lantern, alice, bob):
    row = services.card_import(server=lantern, raw=card_json(name="Mira"), filename="m.json", by=alice).row
    client.force_login(bob)
    page = client.get(reverse("characters:detail", args=[lantern.pk, row.pk])).content.decode()
    assert "Deactivate" not in page and ">Delete</button>" not in page
