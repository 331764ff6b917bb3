"""Content macros (and which ones the assembler may de-duplicate) and the clock macros."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engine.macros import MacroEnv

from .conftest import render

ENV = MacroEnv(
    personality="curious\nkind",
    description="Lantern keeper of the guild.",
    mes_examples="<START>\n{{user}}: hi\n{{char}}: hello",
    mes_examples_raw="{{user}}: hi\n{{char}}: hello",
    last_user_message="where is the lamp?",
    last_message="on the shelf",
    last_char_message="on the shelf",
    summary="They talked about lamps.",
)


@pytest.mark.parametrize(
    ("macro", "expected"),
    [
        ("personality", "curious\nkind"),
        ("description", "Lantern keeper of the guild."),
        ("mesExamples", "<START>\n{{user}}: hi\n{{char}}: hello"),
        ("mesExamplesRaw", "{{user}}: hi\n{{char}}: hello"),
        ("lastUserMessage", "where is the lamp?"),
        ("lastMessage", "on the shelf"),
        ("lastCharMessage", "on the shelf"),
        ("summary", "They talked about lamps."),
        ("scenario", ""),
        ("persona", ""),
    ],
)
def test_content_macros_read_the_environment(macro: str, expected: str) -> None:
    output = render(f"{{{{{macro}}}}}", env=ENV)
    assert output.text == expected
    assert not output.unknown_macros


@pytest.mark.parametrize(
    ("macro", "block"),
    [
        ("description", "description"),
        ("personality", "personality"),
        ("mesExamples", "mesExamples"),
        ("mesExamplesRaw", "mesExamples"),
        ("summary", "summary"),
    ],
)
def test_a_content_macro_with_text_is_reported_as_expanded(macro: str, block: str) -> None:
    assert render(f"{{{{{macro}}}}}", env=ENV).segments[0].expanded == {block}


def test_a_content_macro_without_text_is_not_reported_as_expanded() -> None:
    assert render("{{description}}{{summary}}", env=MacroEnv()).segments[0].expanded == frozenset()


def test_a_content_macro_evaluated_inside_a_comment_still_counts_as_expanded() -> None:
    segment = render("{{// {{setvar::d::{{description}}}} }}", env=ENV).segments[0]
    assert segment.expanded == {"description"}  # its text went into a variable another node may show


NOW = datetime(2026, 11, 21, 20, 7, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("macro", "expected"),
    [
        ("time", "8:07 PM"),
        ("date", "November 21, 2026"),
        ("weekday", "Saturday"),
        ("isotime", "20:07"),
        ("isodate", "2026-11-21"),
        ("datetimeformat::YYYY-MM-DD HH:mm:ss", "2026-11-21 20:07:05"),
        ("datetimeformat::dddd, MMMM D, YY", "Saturday, November 21, 26"),
        ("datetimeformat::ddd MMM DD h:mm A", "Sat Nov 21 8:07 PM"),
        ("datetimeformat::hh [o'clock] H M", "08 o'clock 20 11"),
    ],
)
def test_clock_macros_format_the_request_time_in_en_us(macro: str, expected: str) -> None:
    assert render(f"{{{{{macro}}}}}", env=MacroEnv(now=NOW)).text == expected


def test_clock_macros_use_the_requests_timezone() -> None:
    env = MacroEnv(now=NOW, timezone="Asia/Tokyo")
    assert render("{{weekday}} {{isotime}}", env=env).text == "Sunday 05:07"


def test_an_unknown_timezone_falls_back_to_utc_with_a_warning() -> None:
    output = render("{{isotime}}", env=MacroEnv(now=NOW, timezone="Mars/Olympus"))
    assert output.text == "20:07"
    assert any("Mars/Olympus" in warning for warning in output.warnings)


@pytest.mark.parametrize(
    ("gap", "words"),
    [
        (timedelta(seconds=10), "a few seconds"),
        (timedelta(minutes=5), "5 minutes"),
        (timedelta(hours=1), "an hour"),
        (timedelta(hours=3), "3 hours"),
        (timedelta(days=1), "a day"),
        (timedelta(days=4), "4 days"),
    ],
)
def test_idle_duration_is_the_gap_between_the_two_latest_user_messages(gap: timedelta, words: str) -> None:
    times = (NOW - timedelta(days=30), NOW - gap, NOW)
    assert render("{{idle_duration}}", env=MacroEnv(now=NOW, user_message_times=times)).text == words


def test_idle_duration_with_one_message_is_just_now() -> None:
    assert render("{{idle_duration}}", env=MacroEnv(user_message_times=(NOW,))).text == "just now"
