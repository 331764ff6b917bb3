"""How the preview shows long text without changing a character of it."""

from __future__ import annotations

import pytest

from assembly.preview_display import is_long, segments, snippet, variable_rows


@pytest.mark.parametrize(
    "content",
    [
        "",
        "one line",
        "a\n\nb",
        "a\n\n\n\n\nb",
        "\n\n\n\nstarts blank",
        "ends blank\n\n \n\t\n",
        "x\r\n\r\n\r\ny",
    ],
)
def test_the_segments_joined_are_the_message_exactly(content):
    assert "".join(segment.text for segment in segments(content)) == content


def test_a_run_of_blank_lines_folds_into_one_marker_and_a_single_blank_line_does_not():
    folded = [s for s in segments("rules\n\n\n\n\n\nmore rules") if s.blank_lines]
    assert [s.blank_lines for s in folded] == [5]
    assert not any(s.blank_lines for s in segments("paragraph\n\nparagraph"))


def test_a_message_that_starts_with_a_screenful_of_blank_lines_shows_its_text_in_the_snippet():
    content = "\n" * 40 + "<tracker_theme>Parchment</tracker_theme>"
    assert snippet(content) == ("<tracker_theme>Parchment</tracker_theme>",)
    assert not is_long(content.strip())


def test_variables_become_rows_with_their_type_and_a_short_form_of_long_values():
    rows = {
        row.name: row for row in variable_rows({"hp": 30, "mood": "calm", "premise": "x" * 500, "on": True})
    }
    assert (rows["hp"].value, rows["hp"].type) == ("30", "number")
    assert (rows["mood"].value, rows["mood"].type, rows["mood"].short) == ("calm", "text", "")
    assert rows["premise"].value == "x" * 500 and len(rows["premise"].short) < 130
    assert rows["on"].type == "true/false"
