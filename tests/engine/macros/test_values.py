"""Numbers parse and print as JavaScript's Number() and String() do."""

from __future__ import annotations

import math

import pytest

from engine.macros.values import as_collection, js_number, js_number_text, to_text


@pytest.mark.parametrize(
    ("number", "printed"),
    [
        (3, "3"),
        (3.0, "3"),
        (-0.0, "0"),
        (2.5, "2.5"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (123456789012345680000.0, "123456789012345680000"),
        (0.000001, "0.000001"),
        (0.0000015, "0.0000015"),
        (1e-7, "1e-7"),
        (-2.5e-8, "-2.5e-8"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (math.nan, "NaN"),
    ],
)
def test_numbers_print_as_javascript_prints_them(number: float, printed: str) -> None:
    assert js_number_text(number) == printed


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("5", 5),
        (" 3.0 ", 3),
        ("", 0),
        ("   ", 0),
        ("1e3", 1000),
        (".5", 0.5),
        ("5.", 5),
        ("-4", -4),
        ("0x10", 16),
        ("Infinity", math.inf),
        ("5px", None),
        ("1,000", None),
        ("abc", None),
    ],
)
def test_text_converts_to_a_number_as_javascript_number_does(text: str, number: float | None) -> None:
    assert js_number(text) == number


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        ("text", "text"),
        (None, ""),
        (True, "true"),
        (7, "7"),
        (["a", 1], '["a",1]'),
        ({"k": "é"}, '{"k":"é"}'),
    ],
)
def test_values_print_as_getvar_shows_them(value: object, printed: str) -> None:
    assert to_text(value) == printed


@pytest.mark.parametrize(
    ("value", "collection"),
    [('{"a":1}', {"a": 1}), (" [1] ", [1]), ("[broken", None), ("plain", None), ("5", None), ([1], [1])],
)
def test_json_collections_are_recognised_in_text_and_values(value: object, collection: object) -> None:
    assert as_collection(value) == collection
