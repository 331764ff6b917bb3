"""A card's picture for the public avatar URL (docs/groups.md#avatars): the card's own PNG with every
chunk but the image's dropped (a card PNG carries the whole card as text; the picture must show
nothing else), or, for a card that came as JSON, a picture drawn from its name.

Pure: chunk headers are walked as `png.py` walks them; the drawn picture is written with zlib.
"""

from __future__ import annotations

import hashlib
import struct
import zlib

from .png import SIGNATURE, PngError, is_png, png_chunk

# The chunks that make the picture; text, time, EXIF and private chunks are never copied.
IMAGE_CHUNKS = frozenset({b"IHDR", b"PLTE", b"tRNS", b"IDAT", b"gAMA", b"cHRM", b"sRGB", b"sBIT", b"IEND"})
MAX_CHUNKS = 10_000

GRID = 5  # cells per side of the drawn picture (the left half mirrored, as identicons are)
CELL = 32  # pixels per cell: a 160 × 160 picture, over Discord's 128 px avatar


def picture_only(raw: bytes) -> bytes:
    """The PNG `raw` with only the chunks of its picture (the card's text chunks are left out).
    Raises PngError when it is not a readable PNG."""
    if not is_png(raw):
        raise PngError("This is not a PNG image.")
    kept = [SIGNATURE]
    offset = len(SIGNATURE)
    for _ in range(MAX_CHUNKS):
        if offset + 12 > len(raw):
            raise PngError("The PNG image is truncated: it ends before its last chunk.")
        length, kind = struct.unpack(">I4s", raw[offset : offset + 8])
        end = offset + 12 + length
        if end > len(raw):
            raise PngError("The PNG image is truncated or damaged.")
        if kind in IMAGE_CHUNKS:
            kept.append(raw[offset:end])
        if kind == b"IEND":
            return b"".join(kept)
        offset = end
    raise PngError(f"The PNG image has more than {MAX_CHUNKS} chunks.")


def drawn_avatar(name: str) -> bytes:
    """A 160 × 160 PNG drawn from `name` alone: a symmetric 5 × 5 pattern in one colour on a light
    ground, the same picture for the same name in every process."""
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=32).digest()  # 3 colour bytes, 15 cells
    colour = bytes(64 + b % 160 for b in digest[:3])  # mid-range: readable on light and dark themes
    ground = b"\xf2\xf2\xf2"
    half = (GRID + 1) // 2
    cells = [[bool(digest[3 + row * half + col] & 1) for col in range(half)] for row in range(GRID)]
    rows = []
    for row in range(GRID):
        line = b""
        for col in range(GRID):
            on = cells[row][col if col < half else GRID - 1 - col]
            line += (colour if on else ground) * CELL
        rows.extend([b"\x00" + line] * CELL)  # filter type 0 per scanline
    side = GRID * CELL
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        SIGNATURE
        + png_chunk(b"IHDR", header)
        + png_chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + png_chunk(b"IEND", b"")
    )
