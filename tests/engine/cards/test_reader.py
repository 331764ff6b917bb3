"""Reading character cards (docs/cards.md): JSON V1/V2/V3 and PNG, and one sentence for anything else."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

import pytest

from engine.cards import card_png, read_card
from engine.cards.png import placeholder_png, with_text_chunks
from engine.st_format import ImportRefused
from tests.corpus import CORPUS, needs_corpus
from tests.present import present

V2: dict[str, Any] = {
    "spec": "chara_card_v2",
    "spec_version": "2.0",
    "data": {
        "name": "Mira",
        "description": "A lighthouse keeper.",
        "personality": "patient",
        "scenario": "A storm at sea.",
        "first_mes": "Welcome in.",
        "mes_example": "<START>\n{{user}}: Hi\n{{char}}: Hello",
        "system_prompt": "{{original}} Mira speaks softly.",
        "post_history_instructions": "Stay brief.",
        "tags": ["sea"],
        "extensions": {"depth_prompt": {"prompt": "Mira hums.", "depth": 2, "role": "assistant"}},
        "character_book": {"entries": [{"keys": ["lamp"], "content": "The lamp is old.", "enabled": True}]},
    },
}


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def as_b64(document: dict) -> bytes:
    return base64.b64encode(json.dumps(document).encode())


@needs_corpus
@pytest.mark.parametrize("name", ["prolix-cipher-v3.json", "prolix-lumia.json"])
def test_both_corpus_cards_import_with_their_names(name):
    read = read_card((CORPUS / "cards" / name).read_bytes())
    assert read.card.spec == "chara_card_v3" and read.card.name.strip()
    assert "description" in read.card.filled_fields()


def test_a_v2_card_keeps_its_fields_depth_prompt_and_book():
    card = read_card(json.dumps(V2).encode()).card
    assert (card.name, card.scenario, card.system_prompt) == (
        "Mira",
        "A storm at sea.",
        V2["data"]["system_prompt"],
    )
    depth_prompt = present(card.depth_prompt)
    assert (depth_prompt.prompt, depth_prompt.depth, depth_prompt.role) == (
        "Mira hums.",
        2,
        "assistant",
    )
    assert present(card.character_book)["entries"][0]["keys"] == ["lamp"]
    assert card.filled_fields()[:2] == ["name", "description"]


def test_a_v1_card_reads_its_top_level_fields():
    card = read_card(
        json.dumps({"name": "Old", "description": "From 2023.", "first_mes": "Hey"}).encode()
    ).card
    assert (card.spec, card.name, card.description, card.first_mes) == (
        "chara_card_v1",
        "Old",
        "From 2023.",
        "Hey",
    )


def test_a_png_written_by_us_reads_back_with_identical_fields():
    card = read_card(json.dumps(V2).encode()).card
    again = read_card(card_png(card, book=card.character_book)).card
    assert again == card.__class__(
        **{**{f: getattr(card, f) for f in card.__slots__}, "spec": "chara_card_v3"}
    )


def test_a_png_with_both_chunks_is_read_from_ccv3():
    old = {**V2, "data": {**V2["data"], "name": "Old name"}}
    new = {**V2, "spec": "chara_card_v3", "data": {**V2["data"], "name": "New name"}}
    png = with_text_chunks(placeholder_png(), {"chara": as_b64(old), "ccv3": as_b64(new)})
    assert read_card(png).card.name == "New name"


def test_a_truncated_png_is_refused_in_one_sentence():
    png = card_png(read_card(json.dumps(V2).encode()).card)
    with pytest.raises(ImportRefused, match="truncated"):
        read_card(png[: len(png) // 2])


def test_a_png_declaring_a_one_gigabyte_chunk_is_refused_without_reading_it():
    png = placeholder_png()[:8] + struct.pack(">I", 1 << 30) + b"tEXt" + b"chara\x00abc"
    with pytest.raises(ImportRefused, match="1073741824 bytes that are not there"):
        read_card(png)


def test_a_chunk_with_invalid_base64_is_refused():
    png = with_text_chunks(placeholder_png(), {"chara": b"not base64 at all!!"})
    with pytest.raises(ImportRefused, match="not valid base64"):
        read_card(png)


def test_a_png_without_a_card_says_so():
    with pytest.raises(ImportRefused, match="no character card"):
        read_card(placeholder_png())


def test_a_compressed_text_chunk_that_would_inflate_past_the_bound_is_refused():
    bomb = zlib.compress(b"A" * (9 * 1024 * 1024))
    png = placeholder_png()[:-12] + chunk(b"zTXt", b"chara\x00\x00" + bomb) + chunk(b"IEND", b"")
    with pytest.raises(ImportRefused, match="inflates to more than"):
        read_card(png)


def test_many_compressed_chunks_are_refused_at_the_cards_total_bound_without_inflating_the_rest():
    """Issue 35: 400 chunks of 4 MiB each (a 1.6 GB ask from a 1.6 MB file) stop at the 16 MiB bound."""
    import tracemalloc

    four_mib = zlib.compress(b"A" * (4 * 1024 * 1024), 9)
    chunks = b"".join(chunk(b"zTXt", f"note{i}".encode() + b"\x00\x00" + four_mib) for i in range(400))
    png = placeholder_png()[:-12] + chunks + chunk(b"IEND", b"")
    tracemalloc.start()
    try:
        with pytest.raises(ImportRefused, match="16 MiB together"):
            read_card(png)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024  # the bound and a copy or two, not 1.6 GB


def test_compressed_chunks_under_the_total_bound_are_read():
    card = {"spec": "chara_card_v2", "data": {"name": "Mira", "description": "d" * 100}}
    payload = base64.b64encode(json.dumps(card).encode())
    filler = b"".join(
        chunk(b"zTXt", f"note{i}".encode() + b"\x00\x00" + zlib.compress(b"B" * 1024 * 1024))
        for i in range(10)
    )
    png = placeholder_png()[:-12] + filler + chunk(b"tEXt", b"chara\x00" + payload) + chunk(b"IEND", b"")
    assert read_card(png).card.name == "Mira"


def test_a_lorebook_and_a_preset_are_refused_saying_what_they_are():
    with pytest.raises(ImportRefused, match="lorebook"):
        read_card(json.dumps({"entries": {"0": {"key": ["a"], "content": "b"}}}).encode())
    with pytest.raises(ImportRefused, match="preset"):
        read_card(json.dumps({"prompts": [], "prompt_order": []}).encode())


def test_an_oversized_card_is_refused_before_it_is_read():
    with pytest.raises(ImportRefused) as refused:
        read_card(b"{" + b" " * (10 * 1024 * 1024) + b"}")
    assert refused.value.status == 413
