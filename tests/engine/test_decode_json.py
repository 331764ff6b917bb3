"""A request body reads the same whichever decoder reads it (docs/assembly.md#the-http-path-a-bot-pays):
the fast one for the common body, the standard one for what the fast one would read differently."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.buckets import BucketError, decode_json
from tests.engine.fuzzing import examples

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=examples(500), deadline=None)
@given(json_values, st.booleans())
def test_any_document_reads_as_the_standard_decoder_reads_it(value: object, ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    try:
        expected = json.loads(raw)
    except RecursionError:
        return
    if "\\u0000" in raw.decode() or any(0xD800 <= ord(c) <= 0xDFFF for c in raw.decode(errors="replace")):
        return  # refused either way; the next tests say how
    try:
        assert decode_json(raw) == expected
    except BucketError as refused:
        assert "cannot be stored as text" in refused.message


def test_a_seed_beyond_64_bits_stays_the_exact_integer_the_bot_sent() -> None:
    assert decode_json(b'{"seed": 123456789012345678901234567}') == {"seed": 123456789012345678901234567}
    assert decode_json(b"  18446744073709551617") == 18446744073709551617


def test_what_only_the_standard_decoder_accepts_is_still_accepted() -> None:
    assert decode_json(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}  # a BOM
    assert math.isnan(decode_json(b"[NaN]")[0])


@pytest.mark.parametrize(
    ("raw", "sentence"),
    [
        (b'{"history": [{"content": "a\\u0000b"}]}', "`history[0].content` contains a NUL character"),
        (b'{"name": "\\ud800"}', "`name` contains a lone surrogate (\\ud800)"),
        (b'{"a": 1,}', "is not valid JSON (line 1, column 9)"),
        (b"\xff{}", "is not UTF-8 text"),
    ],
)
def test_a_body_that_cannot_be_stored_is_refused_with_the_same_sentence(raw: bytes, sentence: str) -> None:
    with pytest.raises(BucketError) as refused:
        decode_json(raw, what="The request body")
    assert sentence in refused.value.message
