"""Avatars for webhooks (docs/groups.md#avatars): the group API lists each member's public
image URL; it works with no session, shows the picture and nothing of the card, and stops working
once the card is deleted; a changed signature or another server's path finds nothing."""

from __future__ import annotations

import json
import struct
import zlib
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from characters import services as card_services
from core.actors import SYSTEM
from engine.cards import card_png, read_card
from groups import services

from .conftest import card_bytes

pytestmark = pytest.mark.django_db


def picture(*, stamped: bool = True) -> bytes:
    """A real 2 × 1 RGB picture (red, blue), with a tIME chunk unless `stamped` is false."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        return struct.pack(">I", len(body)) + kind + body + crc

    header = struct.pack(">IIBBBBB", 2, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00\x00\x00\xff")
    stamp = struct.pack(">HBBBBB", 2026, 12, 1, 23, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + (chunk(b"tIME", stamp) if stamped else b"")
        + chunk(b"IDAT", pixels)
        + chunk(b"IEND", b"")
    )


def chunk_kinds(png: bytes) -> list[bytes]:
    kinds, offset = [], 8
    while offset < len(png):
        length, kind = struct.unpack(">I4s", png[offset : offset + 8])
        kinds.append(kind)
        offset += 12 + length
    return kinds


@pytest.fixture
def party(lantern, party_cards, committed):
    secret = read_card(card_bytes("Wren", description="Wren's secret: the key is under the bell.")).card
    wren = card_services.card_import(
        server=lantern,
        raw=card_png(secret, avatar=picture()),
        filename="Wren.png",
        activate=False,
        by=SYSTEM,
    ).row
    with committed(execute=True):
        services.group_save(server=lantern, name="Party", members=["Mira", "Wren"], by=SYSTEM)
    return {"Mira": party_cards["Mira"], "Wren": wren}


def avatar_urls(client, token) -> dict[str, str]:
    answer = client.get(
        reverse("groups:api-detail", args=[1001, "Party"]), HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    return {m["name"]: m["avatar_url"] for m in answer.json()["members"]}


def fetch(url: str):
    return Client().get(urlsplit(url).path)  # a fresh client: no session, no token


def test_the_group_api_lists_an_absolute_avatar_url_per_member(client, party, api_token):
    urls = avatar_urls(client, api_token)
    assert set(urls) == {"Mira", "Wren"}
    assert all(
        url.startswith("http://testserver/avatars/1001/") and url.endswith(".png") for url in urls.values()
    )
    assert len(set(urls.values())) == 2


def test_the_group_list_carries_the_same_avatar_urls(client, party, api_token):
    listed = client.get(reverse("groups:api-list", args=[1001]), HTTP_AUTHORIZATION=f"Bearer {api_token}")
    [group] = listed.json()["groups"]
    assert {m["name"]: m["avatar_url"] for m in group["members"]} == avatar_urls(client, api_token)


def test_a_png_cards_avatar_is_its_picture_without_the_card_text(client, party, api_token):
    answer = fetch(avatar_urls(client, api_token)["Wren"])
    assert answer.status_code == 200 and answer["Content-Type"] == "image/png"
    assert "public" in answer["Cache-Control"] and "max-age" in answer["Cache-Control"]
    assert chunk_kinds(answer.content) == [b"IHDR", b"IDAT", b"IEND"]
    assert (
        b"secret" not in answer.content and b"chara" not in answer.content and b"tIME" not in answer.content
    )
    assert answer.content == picture(stamped=False)  # the card's own picture, chunk for chunk


def test_a_json_cards_avatar_is_a_picture_drawn_from_its_name(client, party, api_token):
    first = fetch(avatar_urls(client, api_token)["Mira"])
    assert first.status_code == 200 and first["Content-Type"] == "image/png"
    assert first.content.startswith(b"\x89PNG\r\n\x1a\n")
    assert struct.unpack(">II", first.content[16:24]) == (160, 160)
    assert chunk_kinds(first.content) == [b"IHDR", b"IDAT", b"IEND"]
    assert fetch(avatar_urls(client, api_token)["Mira"]).content == first.content


def test_a_deleted_cards_avatar_url_answers_404(client, party, api_token, committed):
    url = avatar_urls(client, api_token)["Wren"]
    with committed(execute=True):
        card_services.card_delete(card=party["Wren"], by=SYSTEM)
    assert fetch(url).status_code == 404


def test_a_changed_signature_or_another_servers_path_finds_nothing(client, party, api_token, harbor):
    path = urlsplit(avatar_urls(client, api_token)["Mira"]).path
    signature = path.rsplit("/", 1)[1].removesuffix(".png")
    forged = path.replace(signature, ("0" if signature[0] != "0" else "1") + signature[1:])
    assert Client().get(forged).status_code == 404
    moved = path.replace("/avatars/1001/", f"/avatars/{harbor.pk}/")
    assert Client().get(moved).status_code == 404


def test_charlie_cannot_list_the_lantern_guilds_avatars(client, party, harbor_token):
    answer = client.get(
        reverse("groups:api-detail", args=[1001, "Party"]), HTTP_AUTHORIZATION=f"Bearer {harbor_token}"
    )
    assert answer.status_code == 404 and "avatar" not in json.dumps(answer.json())
