"""A segment that draws nothing and reads no clock is rendered once per state: a later pass that reaches it
with equal variables and equal env fields reuses that render (engine/macros/render.py, `_Pass.render_kept`).
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
