"""A segment that draws nothing and reads no clock is rendered once per state: a later pass that reaches it
with the variables it read holding equal values and equal env fields reuses that render, its writes made
again (engine/macros/render.py, `_Pass.render_kept`).
What the bot sends must be what a fresh render would send: the text, the writes, the warnings."""

from __future__ import annotations

from datetime import UTC, datetime

from engine.macros import MacroEnv, Segment, compile_text, render_segments
from engine.macros.render import MAX_EVALUATIONS


def segments(*texts: str) -> list[Segment]:
    return [Segment(f"node{i}", compile_text(text)) for i, text in enumerate(texts)]


def fresh(texts: tuple[str, ...], **kwargs):
    return render_segments(segments(*texts), **kwargs)


def test_a_kept_segment_still_writes_and_reads_what_the_variables_hold():
    texts = ("{{setvar::mood::calm}}", "Mood: {{getvar::mood}}, {{getvar::weather}}")
    nodes = segments(*texts)
    first = render_segments(nodes, env=MacroEnv(), seed=1, variables={"weather": "rain"})
    again = render_segments(nodes, env=MacroEnv(), seed=2, variables={"weather": "rain"})
    assert [s.text for s in again.segments] == ["", "Mood: calm, rain"] == [s.text for s in first.segments]
    assert again.variables == {"weather": "rain", "mood": "calm"}
    changed = render_segments(nodes, env=MacroEnv(), seed=3, variables={"weather": "snow"})
    assert changed.segments[1].text == "Mood: calm, snow"


def test_a_kept_segment_reads_the_env_fields_of_its_pass():
    nodes = segments("About: {{description}}")
    first = render_segments(nodes, env=MacroEnv(description="a fox"), seed=1)
    second = render_segments(nodes, env=MacroEnv(description="a wolf"), seed=1)
    assert [first.segments[0].text, second.segments[0].text] == ["About: a fox", "About: a wolf"]
    assert second.segments[0].expanded == {"description"}


def test_a_kept_segment_reports_its_warnings_and_unknown_macros_again():
    texts = ("{{getvar::a::b}} {{mystery}}",)
    nodes = segments(*texts)
    for seed in (1, 2):
        output = render_segments(nodes, env=MacroEnv(), seed=seed)
        expected = fresh(texts, env=MacroEnv(), seed=seed)
        assert output.warnings == expected.warnings and output.warnings
        assert output.unknown_macros == expected.unknown_macros == {"mystery"}


def test_draws_and_the_clock_are_rendered_every_time():
    nodes = segments("{{random::a::b::c::d::e::f::g::h}}", "{{if time}}{{time}}{{/if}}")
    texts = {render_segments(nodes, env=MacroEnv(), seed=seed).segments[0].text for seed in range(40)}
    assert len(texts) > 1
    times = [
        render_segments(nodes, env=MacroEnv(now=datetime(2026, 1, 1, hour, tzinfo=UTC)), seed=1)
        .segments[1]
        .text
        for hour in (3, 15)
    ]
    assert times[0] != times[1]


def test_a_number_and_a_boolean_are_not_taken_for_each_other():
    nodes = segments("{{getvar::x}}")
    assert render_segments(nodes, env=MacroEnv(), seed=1, variables={"x": 1}).segments[0].text == "1"
    assert render_segments(nodes, env=MacroEnv(), seed=1, variables={"x": True}).segments[0].text == "true"


def test_a_kept_segment_spends_the_same_evaluations():
    many = "{{getvar::x}}" * (MAX_EVALUATIONS // 2 + 1)
    nodes = segments(many, many)
    first = render_segments(nodes, env=MacroEnv(), seed=1, variables={"x": "y"})
    again = render_segments(nodes, env=MacroEnv(), seed=1, variables={"x": "y"})
    expected = fresh((many, many), env=MacroEnv(), seed=1, variables={"x": "y"})
    assert (
        [s.text for s in again.segments]
        == [s.text for s in expected.segments]
        == [s.text for s in first.segments]
    )
    assert again.warnings == expected.warnings and expected.warnings


def test_a_drawn_variable_reaches_the_segments_that_read_it_and_the_others_write_as_before():
    # A node draws into a variable on every call; a later node that reads it must see each call's draw,
    # while the nodes around it (which never read it) still make their own writes, in order.
    texts = (
        "{{setvar::style::{{random::a::b::c::d::e::f::g::h}}}}",
        "{{setvar::count::1}}{{addvar::count::1}}{{setvar::gone::x}}{{deletevar::gone}}",
        "Style {{getvar::style}}, count {{getvar::count}}.",
        "{{incvar::count}}",
    )
    nodes = segments(*texts)
    for seed in range(12):
        output = render_segments(nodes, env=MacroEnv(), seed=seed, variables={"gone": "y"})
        expected = fresh(texts, env=MacroEnv(), seed=seed, variables={"gone": "y"})
        assert [s.text for s in output.segments] == [s.text for s in expected.segments]
        assert output.variables == expected.variables
        assert "gone" not in output.variables and output.variables["count"] == 3
        assert output.segments[2].text == f"Style {output.variables['style']}, count 2."


def test_a_kept_segment_whose_read_variable_changed_renders_again():
    nodes = segments("{{setvar::x::{{getvar::seen}}!}}", "{{getvar::x}}")
    first = render_segments(nodes, env=MacroEnv(), seed=1, variables={"seen": "one", "other": "1"})
    second = render_segments(nodes, env=MacroEnv(), seed=1, variables={"seen": "two", "other": "1"})
    third = render_segments(nodes, env=MacroEnv(), seed=1, variables={"other": "2"})
    assert [first.segments[1].text, second.segments[1].text, third.segments[1].text] == ["one!", "two!", "!"]
    assert third.variables == {"other": "2", "x": "!"}
