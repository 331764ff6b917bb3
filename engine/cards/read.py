"""Reading an uploaded card: PNG or JSON, V1, V2 or V3, to a `Card`, or one sentence saying why not.

The JSON is decoded as leniently as a preset (docs/import.md#input-checks): invalid UTF-8 replaced, raw
control characters in strings accepted, NUL removed, NaN refused. A file that is a preset or a lorebook is
refused saying what it is and where it goes.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from engine.st_format import ImportRefused
from engine.st_format.decode import decode_text, load_json, strip_nul

from ..vocabulary import ROLES
from .card import TEXT_FIELDS, Card, DepthPrompt
from .png import PngError, is_png, text_chunks, with_text_chunks

MAX_CARD_BYTES = 10 * 1024 * 1024
MAX_TEXT_CHARS = 1_000_000  # one field; a card is prose, not a database
CARD_KEYS = ("ccv3", "chara")  # ccv3 wins when a PNG carries both


@dataclass(frozen=True, slots=True)
class ReadCard:
    card: Card
    source: dict[str, Any]  # the card's JSON as uploaded (after lenient decoding)
    avatar: bytes | None  # the PNG itself, when the card came as one
    warnings: tuple[str, ...]


# item 12 of docs/fidelity.md#the-deliberate-differences, named where it applies
EMBEDDED_BOOK = (
    "The card's embedded lorebook is used as its linked book; SillyTavern 1.18 scans it only once the "
    "card's lore has been imported and linked."
)


def read_card(raw: bytes, *, max_bytes: int = MAX_CARD_BYTES) -> ReadCard:
    """The card in `raw`; raises ImportRefused (one sentence) for anything that is not one."""
    if len(raw) > max_bytes:
        raise ImportRefused(
            f"This file is {len(raw) / (1024 * 1024):.1f} MiB, over the "
            f"{max_bytes // (1024 * 1024)} MiB limit for a character card.",
            status=413,
        )
    if not raw.strip():
        raise ImportRefused("This file is empty.")
    avatar = None
    if is_png(raw):
        avatar = raw
        raw = _png_card_json(raw)
    text, replaced = decode_text(raw)
    warnings: list[str] = []
    if replaced:
        warnings.append(f"The card is not valid UTF-8: {replaced} invalid byte sequence(s) were replaced.")
    try:
        data, lenient = load_json(text, what="character card")
    except ImportRefused as refused:
        if avatar is None and refused.message.startswith("This file is not valid JSON"):
            raise ImportRefused(
                "This file is neither a PNG character card nor JSON, so it is not a character card "
                f"({refused.message[len('This file is not valid JSON: ') :].rstrip('.')})."
            ) from None
        raise
    if lenient:
        warnings.append("Raw control characters inside JSON strings were accepted as they are.")
    if not isinstance(data, dict):
        raise ImportRefused("This file is JSON but not an object, so it is not a character card.")
    data, removed = strip_nul(data)
    if removed:
        warnings.append(f"{removed} NUL character(s) were removed: the database cannot store them.")
    _refuse_other_shapes(data)
    card = _card(data, warnings)
    return ReadCard(card=card, source=data, avatar=avatar, warnings=tuple(warnings))


def card_png(card: Card, *, book: dict[str, Any] | None = None, avatar: bytes | None = None) -> bytes:
    """The card as a PNG SillyTavern imports: `ccv3` (V3) and `chara` (V2) chunks, base64 JSON."""

    def encoded(document: dict[str, Any]) -> bytes:
        return base64.b64encode(json.dumps(document, ensure_ascii=False).encode("utf-8"))

    return with_text_chunks(
        avatar, {"chara": encoded(card.to_v2(book=book)), "ccv3": encoded(card.to_v3(book=book))}
    )


def _png_card_json(raw: bytes) -> bytes:
    try:
        texts = text_chunks(raw)
    except PngError as error:
        raise ImportRefused(error.message) from None
    key = next((key for key in CARD_KEYS if key in texts), None)
    if key is None:
        raise ImportRefused("This PNG image carries no character card (no `ccv3` or `chara` text chunk).")
    try:
        return base64.b64decode(texts[key].strip(), validate=True)
    except (binascii.Error, ValueError):
        raise ImportRefused(
            f"The PNG's `{key}` chunk is not valid base64, so the card cannot be read."
        ) from None


def _refuse_other_shapes(data: dict[str, Any]) -> None:
    if data.get("spec") == "lorebook_v3" or isinstance(data.get("entries"), dict | list):
        raise ImportRefused(
            "This is a SillyTavern World Info (lorebook) file, not a character card: import it on the "
            "Lorebooks page."
        )
    if isinstance(data.get("prompts"), list) or "story_string" in data or "prompt_order" in data:
        raise ImportRefused(
            "This is a SillyTavern preset, not a character card: import it on the Presets page."
        )
    inner = data.get("data")
    if data.get("spec") in ("chara_card_v2", "chara_card_v3"):
        if not isinstance(inner, dict):
            raise ImportRefused("This character card has no `data` object, so its fields cannot be read.")
        return
    if not isinstance(data.get("name"), str) or not any(
        key in data for key in ("description", "first_mes", "personality", "char_persona")
    ):
        raise ImportRefused(
            "This is not a SillyTavern character card: expected a `spec` of chara_card_v2 or v3, or a "
            "V1 card's name and description."
        )


def _card(data: dict[str, Any], warnings: list[str]) -> Card:
    given_spec = data.get("spec")
    spec = given_spec if given_spec in ("chara_card_v2", "chara_card_v3") else "chara_card_v1"
    fields = data["data"] if spec != "chara_card_v1" else data
    texts = {name: _text(fields, name, warnings) for name in TEXT_FIELDS}
    if spec == "chara_card_v1":
        texts["description"] = texts["description"] or _text(fields, "char_persona", warnings)
        texts["scenario"] = texts["scenario"] or _text(fields, "world_scenario", warnings)
        texts["first_mes"] = texts["first_mes"] or _text(fields, "char_greeting", warnings)
        texts["mes_example"] = texts["mes_example"] or _text(fields, "example_dialogue", warnings)
        texts["creator_notes"] = texts["creator_notes"] or _text(fields, "creatorcomment", warnings)
    if not texts["name"].strip():
        raise ImportRefused("This character card has no name.")
    raw_extensions = fields.get("extensions")
    extensions: dict[str, Any] = raw_extensions if isinstance(raw_extensions, dict) else {}
    book = fields.get("character_book")
    if book is not None and not isinstance(book, dict):
        warnings.append("The card's `character_book` is not an object; it was ignored.")
        book = None
    if book is not None:
        warnings.append(EMBEDDED_BOOK)
    scripts = extensions.get("regex_scripts")
    return Card(
        spec=spec,
        **texts,
        alternate_greetings=_strings(fields.get("alternate_greetings"), "alternate_greetings", warnings),
        tags=_strings(fields.get("tags"), "tags", warnings),
        depth_prompt=_depth_prompt(extensions.get("depth_prompt"), warnings),
        regex_scripts=tuple(s for s in scripts if isinstance(s, dict)) if isinstance(scripts, list) else (),
        character_book=book,
        extensions={k: v for k, v in extensions.items() if k not in ("depth_prompt", "regex_scripts")},
    )


def _text(fields: dict[str, Any], name: str, warnings: list[str]) -> str:
    value = fields.get(name)
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        warnings.append(f"The card's `{name}` is not text; it was left empty.")
        return ""
    if len(value) > MAX_TEXT_CHARS:
        warnings.append(f"The card's `{name}` was cut to {MAX_TEXT_CHARS} characters.")
        return value[:MAX_TEXT_CHARS]
    return value


def _strings(value: Any, name: str, warnings: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        warnings.append(f"The card's `{name}` is not a list; it was left empty.")
        return ()
    return tuple(item for item in value if isinstance(item, str))


def _depth_prompt(value: Any, warnings: list[str]) -> DepthPrompt | None:
    if not isinstance(value, dict):
        return None
    prompt = value.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    depth = value.get("depth", 4)
    if isinstance(depth, str) and depth.strip().lstrip("-").isdigit():
        depth = int(depth)
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
        warnings.append("The card's depth prompt has no usable depth; depth 4 is used.")
        depth = 4
    role = value.get("role", "system")
    if role not in ROLES:
        warnings.append(f"The card's depth prompt has an unknown role {role!r}; system is used.")
        role = "system"
    return DepthPrompt(prompt=prompt, depth=min(depth, 10_000), role=role)
