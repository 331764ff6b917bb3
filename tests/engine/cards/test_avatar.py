"""A card's public picture (docs/groups.md#avatars): the card PNG's picture chunks only, or a picture
drawn from the name; and the dice the roll_dice tool draws are the ones `{{roll}}` sums."""

from __future__ import annotations

import struct
import zlib

import pytest

from engine.cards import Card, card_png, drawn_avatar, picture_only
from engine.cards.png import PngError, text_chunks
from engine.macros import parse_roll, roll_each, stream_for
from engine.macros.dice import roll


def test_a_card_png_keeps_its_picture_and_loses_every_text_chunk() -> None:
    card = Card(spec="chara_card_v2", name="Wren", description="The key is under the bell.")
    png = card_png(card, avatar=drawn_avatar("Wren"))
    assert "chara" in text_chunks(png)
    picture = picture_only(png)
    assert text_chunks(picture) == {} and b"bell" not in picture
    assert picture == drawn_avatar("Wren")  # exactly the picture the card was drawn on


def test_a_truncated_png_is_refused_not_half_copied() -> None:
    png = drawn_avatar("Wren")
    with pytest.raises(PngError):
        picture_only(png[:40])
    with pytest.raises(PngError):
        picture_only(b"GIF89a")


def test_the_drawn_picture_is_a_valid_160_px_rgb_png_and_differs_by_name() -> None:
    png = drawn_avatar("Mira")
    width, height, depth, colour = struct.unpack(">IIBB", png[16:26])
    assert (width, height, depth, colour) == (160, 160, 8, 2)
    length = struct.unpack(">I", png[33:37])[0]
    rows = zlib.decompress(png[41 : 41 + length])
    assert len(rows) == 160 * (1 + 160 * 3)
    assert drawn_avatar("Mira") == png and drawn_avatar("Tomas") != png


def test_the_dice_drawn_one_by_one_are_the_ones_the_roll_macro_sums() -> None:
    spec = parse_roll("4d6+3")
    assert spec is not None
    for seed in range(20):
        dice = roll_each(spec, stream_for(seed, 2))
        assert sum(dice) + 3 == roll(spec, stream_for(seed, 2))
