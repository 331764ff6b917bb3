"""A macro called with more or fewer `::` arguments than SillyTavern 1.18 accepts is sent as written,
as SillyTavern sends it (its macros are strict about their arguments,
docs/assembly.md#what-sillytavern-118-corrected)."""

from __future__ import annotations

import pytest

from .conftest import render, render_nodes


@pytest.mark.parametrize(
    "text",
    [
        "{{getvar::mood:: }}",
        "{{getvar}}",
        "{{setvar::mood}}",
        "{{setvar::mood::calm::extra}}",
        "{{incvar::a::b}}",
        "{{reverse::a::b}}",
        "{{personality::x}}",
        "{{noop::x}}",
        "{{greeting::1::2}}",
    ],
)
def test_a_macro_with_the_wrong_number_of_arguments_is_left_as_written(text: str) -> None:
    output = render(text)
    assert output.text == text
    assert any("as SillyTavern 1.18 leaves it" in warning for warning in output.warnings)


def test_a_setvar_with_too_many_arguments_writes_nothing() -> None:
    output = render_nodes("{{setvar::mood::calm::extra}}", "[{{getvar::mood}}]")
    assert output.segments[1].text == "[]"
    assert "mood" not in output.variables


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{setvar::mood::}}[{{getvar::mood}}]", "[]"),
        ("{{setvar::mood::calm}}{{getvar::mood}}", "calm"),
        ("{{setvar::mood}}calm{{/setvar}}{{getvar::mood}}", "calm"),
        ("{{trim}}", ""),
        ("a{{newline::2}}b", "a\n\nb"),
        ("{{reverse}}abc{{/reverse}}", "cba"),
    ],
)
def test_the_accepted_numbers_of_arguments_still_work(text: str, expected: str) -> None:
    output = render(text)
    assert output.text == expected
    assert output.warnings == ()
