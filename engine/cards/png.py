"""PNG text chunks, read and written without decoding the image (docs/cards.md).

Only the chunk headers are walked: every declared length is checked against the bytes that are really
there, compressed text is inflated to a bounded size, and pixel data is never touched.
"""

from __future__ import annotations

import struct
import zlib

from ..errors import EngineError

SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_CHUNKS = 10_000
MAX_TEXT_BYTES = 8 * 1024 * 1024  # an inflated text chunk never grows past this
# All the compressed text of one card together (issue 35): a few times a card's 1,000,000-character
# field limit, since a field is UTF-8 inside base64. Reading stops at the first chunk past it, so a
# small file of many compressed chunks cannot ask for gigabytes.
MAX_INFLATED_BYTES = 16 * 1024 * 1024


class PngError(EngineError, ValueError):
    """The bytes are not a readable PNG; `message` is one sentence."""


def is_png(raw: bytes) -> bool:
    return raw.startswith(SIGNATURE)


def text_chunks(raw: bytes) -> dict[str, bytes]:
    """The PNG's text chunks (tEXt, zTXt, iTXt) by keyword, first one of each keyword kept."""
    if not is_png(raw):
        raise PngError("This is not a PNG image.")
    texts: dict[str, bytes] = {}
    budget = [MAX_INFLATED_BYTES]  # what compressed chunks may still inflate to
    offset = len(SIGNATURE)
    for _ in range(MAX_CHUNKS):
        if offset + 8 > len(raw):
            raise PngError("The PNG image is truncated: it ends before its last chunk.")
        length, kind = struct.unpack(">I4s", raw[offset : offset + 8])
        start, end = offset + 8, offset + 8 + length
        if end + 4 > len(raw):
            raise PngError(
                f"The PNG image is truncated or damaged: a {kind.decode('latin-1', 'replace')!r} chunk "
                f"declares {length} bytes that are not there."
            )
        if kind == b"IEND":
            return texts
        if kind in (b"tEXt", b"zTXt", b"iTXt"):
            keyword = raw[start:end].partition(b"\x00")[0].decode("latin-1")
            if keyword not in texts:  # only the first chunk of a keyword is read (or inflated)
                keyword, text = _text(kind, raw[start:end], budget)
                texts[keyword] = text
        offset = end + 4  # the CRC is not checked: a card's text matters, not the image's integrity
    raise PngError(f"The PNG image has more than {MAX_CHUNKS} chunks.")


def _text(kind: bytes, body: bytes, budget: list[int]) -> tuple[str, bytes]:
    keyword, sep, rest = body.partition(b"\x00")
    if not sep:
        raise PngError("The PNG image has a damaged text chunk (no keyword separator).")
    name = keyword.decode("latin-1")
    if kind == b"tEXt":
        return name, rest
    if kind == b"zTXt":
        return name, _inflate(rest[1:], budget)
    # iTXt: compression flag, method, language tag NUL, translated keyword NUL, text
    if len(rest) < 2:
        raise PngError("The PNG image has a damaged international text chunk.")
    compressed, tail = rest[0], rest[2:]
    _, _, tail = tail.partition(b"\x00")
    _, _, text = tail.partition(b"\x00")
    return name, _inflate(text, budget) if compressed else text


def _inflate(data: bytes, budget: list[int]) -> bytes:
    """One chunk inflated, at most MAX_TEXT_BYTES and at most what the card's budget has left."""
    allowed = min(MAX_TEXT_BYTES, budget[0])
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, allowed + 1)
    except zlib.error:
        raise PngError("The PNG image has a compressed text chunk that does not inflate.") from None
    if len(out) > allowed or inflater.unconsumed_tail:
        if allowed < MAX_TEXT_BYTES:
            raise PngError(
                "The PNG image's compressed text chunks inflate to more than "
                f"{MAX_INFLATED_BYTES // (1024 * 1024)} MiB together, the limit for one card."
            )
        raise PngError(
            f"A compressed text chunk inflates to more than {MAX_TEXT_BYTES // (1024 * 1024)} MiB."
        )
    budget[0] -= len(out)
    return out


def with_text_chunks(image: bytes | None, texts: dict[str, bytes]) -> bytes:
    """`image` (or a 1×1 placeholder) with `texts` as tEXt chunks, replacing chunks of the same keywords."""
    png = image if image is not None and is_png(image) else placeholder_png()
    chunks: list[bytes] = []
    offset = len(SIGNATURE)
    while offset + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[offset : offset + 8])
        chunk = png[offset : offset + 12 + length]
        offset += 12 + length
        if kind == b"IEND":
            break
        if kind in (b"tEXt", b"zTXt", b"iTXt"):
            keyword = chunk[8:].partition(b"\x00")[0].decode("latin-1")
            if keyword in texts:
                continue
        chunks.append(chunk)
    chunks.extend(png_chunk(b"tEXt", name.encode("latin-1") + b"\x00" + text) for name, text in texts.items())
    chunks.append(png_chunk(b"IEND", b""))
    return SIGNATURE + b"".join(chunks)


def placeholder_png() -> bytes:
    """A 1×1 grey pixel: the avatar of a card that came without one."""
    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"\x00\x80")
    return SIGNATURE + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", pixels) + png_chunk(b"IEND", b"")


def png_chunk(kind: bytes, body: bytes) -> bytes:
    return (
        struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    )
