"""docs/import.md#input-checks: from uploaded bytes to a JSON object, or one sentence saying why not.

Order matters: the size is checked on the byte length before anything is decoded.
"""

from __future__ import annotations

import codecs
import json
import threading
from dataclasses import dataclass
from typing import Any

from engine.st_format.model import ImportRefused
from engine.st_format.wording import plural

_MIB = 1024 * 1024
_counter = threading.local()


def _count_and_replace(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeDecodeError)
    _counter.replaced = getattr(_counter, "replaced", 0) + 1
    return "\ufffd", error.end


codecs.register_error("tavernkeep-count-replace", _count_and_replace)


@dataclass(frozen=True, slots=True)
class Decoded:
    """The parsed top-level object and what had to be tolerated to get it."""

    data: dict[str, Any]
    text: str  # the decoded upload (BOM removed), before any cleaning
    warnings: tuple[str, ...]
    nul_removed: int


def _size_words(n: int) -> str:
    if n >= _MIB:
        return f"{n / _MIB:.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.0f} KiB"
    return plural(n, "byte")


def check_size(length: int, max_bytes: int, *, what: str = "preset") -> None:
    """Raise ImportRefused (413) when `length` bytes is over the limit for a `what` (preset, lorebook)."""
    if length > max_bytes:
        size, limit = _size_words(length), _size_words(max_bytes)
        if size == limit:  # e.g. one byte over 2 MiB: the rounded sizes would read the same
            size, limit = f"{length:,} bytes", f"{max_bytes:,}-byte ({limit})"
        raise ImportRefused(f"This file is {size}, over the {limit} limit for a {what}.", status=413)


def decode_text(raw: bytes) -> tuple[str, int]:
    """The upload as text (BOM dropped) and how many invalid UTF-8 sequences were replaced."""
    try:
        text = raw.decode("utf-8")
        replaced = 0
    except UnicodeDecodeError:
        _counter.replaced = 0
        text = raw.decode("utf-8", errors="tavernkeep-count-replace")
        replaced = _counter.replaced
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, replaced


def _refuse_constant(name: str) -> Any:
    raise ImportRefused(
        f"This file contains {name}, which is not a valid JSON number; save the file again from SillyTavern."
    )


def _json_error(err: json.JSONDecodeError) -> ImportRefused:
    reason = err.msg[0].lower() + err.msg[1:] if err.msg else "unexpected content"
    return ImportRefused(f"This file is not valid JSON: {reason} at line {err.lineno}, column {err.colno}.")


def too_deep(what: str) -> str:
    """The refusal for JSON nested past the decoder's limit, naming the kind of file expected."""
    return f"This file's JSON is nested too deeply to be a {what}."


TOO_DEEP = too_deep("SillyTavern preset")


def load_json(text: str, *, what: str = "SillyTavern preset") -> tuple[Any, bool]:
    """The JSON value and whether raw control characters inside strings had to be accepted; `what`
    names the kind of file expected in the refusals."""
    try:
        return json.loads(text, parse_constant=_refuse_constant), False
    except json.JSONDecodeError as err:
        if not err.msg.startswith("Invalid control character"):
            raise _json_error(err) from None
    except RecursionError:
        raise ImportRefused(too_deep(what)) from None
    try:
        return json.loads(text, strict=False, parse_constant=_refuse_constant), True
    except json.JSONDecodeError as err:
        raise _json_error(err) from None
    except RecursionError:
        raise ImportRefused(too_deep(what)) from None


def _top_level_refusal(value: Any, what: str) -> ImportRefused:
    kind = {list: "a list", str: "a string", bool: "true or false", type(None): "null"}.get(
        type(value), "a number"
    )
    return ImportRefused(
        f"This file is JSON but its top level is {kind}, not an object, so it is not a {what}."
    )


def strip_nul(value: Any) -> tuple[Any, int]:
    """`value` with NUL characters removed from every string and key, and how many were removed."""
    if isinstance(value, str):
        count = value.count("\x00")
        return (value.replace("\x00", ""), count) if count else (value, 0)
    if isinstance(value, list):
        total = 0
        out = []
        for item in value:
            cleaned, n = strip_nul(item)
            out.append(cleaned)
            total += n
        return (out, total) if total else (value, 0)
    if isinstance(value, dict):
        total = 0
        out_d: dict[str, Any] = {}
        for key, item in value.items():
            clean_key, n_key = strip_nul(key)
            cleaned, n = strip_nul(item)
            out_d[clean_key] = cleaned
            total += n + n_key
        return (out_d, total) if total else (value, 0)
    return value, 0


def decode_upload(raw: bytes, *, max_bytes: int, what: str = "preset") -> Decoded:
    """The upload as a JSON object (docs/import.md#input-checks); raises ImportRefused with one sentence
    otherwise.

    `what` names the kind of file expected (a preset, a lorebook) in the refusals.
    """
    check_size(len(raw), max_bytes, what=what)
    if not raw.strip():
        raise ImportRefused("This file is empty.")
    if raw.startswith(b"\x89PNG"):
        raise ImportRefused(
            f"This is a PNG image (perhaps a character card: import those on the Characters page), not a {what} JSON file."
        )
    text, replaced = decode_text(raw)
    warnings: list[str] = []
    if replaced:
        warnings.append(
            f"The file is not valid UTF-8: {plural(replaced, 'invalid byte sequence')} "
            f"{'was' if replaced == 1 else 'were'} replaced with \ufffd."
        )
    data, lenient = load_json(text, what="SillyTavern preset" if what == "preset" else what)
    if not isinstance(data, dict):
        raise _top_level_refusal(data, what)
    if lenient:
        warnings.append(
            "Raw control characters (such as line breaks) inside JSON strings were accepted as they are."
        )
    nul_removed = 0
    if "\x00" in text or "\\u0000" in text:
        data, nul_removed = strip_nul(data)
        if nul_removed:
            warnings.append(
                f"{plural(nul_removed, 'NUL character')} {'was' if nul_removed == 1 else 'were'} removed: "
                "the database cannot store them."
            )
    return Decoded(data=data, text=text, warnings=tuple(warnings), nul_removed=nul_removed)
