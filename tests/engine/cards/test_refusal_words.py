"""A refused upload names the kind of file it expected (issue 25): a card is not called a preset."""

from __future__ import annotations

import pytest

from engine import BucketError, decode_json
from engine.cards import read_card
from engine.st_format import ImportRefused
from engine.worldinfo import LorebookRefused, parse_lorebook

DEEP = ("[" * 100_000 + "]" * 100_000).encode()


def test_a_deeply_nested_card_is_refused_as_a_card():
    with pytest.raises(ImportRefused) as refused:
        read_card(DEEP)
    assert refused.value.message == "This file's JSON is nested too deeply to be a character card."


def test_a_deeply_nested_lorebook_is_refused_as_a_lorebook():
    with pytest.raises(LorebookRefused) as refused:
        parse_lorebook(DEEP, filename="deep.json")
    assert refused.value.message == "This file's JSON is nested too deeply to be a lorebook."


def test_a_card_that_is_neither_png_nor_json_says_so():
    with pytest.raises(ImportRefused) as refused:
        read_card(b"GIF89a\x01\x00 not a card")
    assert refused.value.message.startswith("This file is neither a PNG character card nor JSON")


def test_a_deep_request_body_is_not_called_a_bucket_document():
    with pytest.raises(BucketError) as refused:
        decode_json(DEEP, what="The request body")
    assert str(refused.value) == "The request body is nested too deeply to be read."
