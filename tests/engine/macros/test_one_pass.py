"""One pass, as SillyTavern 1.18 renders a prompt (docs/assembly.md#what-sillytavern-118-corrected): rendering
the segments together is rendering them one after another, each starting from the variables the one before
left."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.macros import MacroEnv, Segment, compile_text, render_segments
from tests.engine.fuzzing import examples

from .conftest import render_nodes

NOW = datetime(2026, 11, 21, 20, 7, tzinfo=UTC)
ENV = MacroEnv(now=NOW, description="desc")

PIECES = [
    "{{setvar::a::1}}", "{{setvar::b::{{getvar::a}}x}}", "{{getvar::a}}", "{{getvar::b}}", "{{getvar::c}}",
    "{{incvar::c}}", "{{addvar::a::2}}", "{{deletevar::a}}", "{{setglobalvar::g::3}}", "{{getglobalvar::g}}",
    "{{foo}}", "{{description}}", "{{each::[1,2]}}{{incvar::n}}{{/each}}", "{{getvar::n}}", "text ",
    "{{// {{setvar::c::7}} }}", "{{setvar::a::{{getvar::c}}}}", "{{addvar::b::{{getvar::g}}}}",
]  # fmt: skip

segment_texts = st.lists(st.lists(st.sampled_from(PIECES), max_size=6).map("".join), min_size=1, max_size=6)


@settings(max_examples=examples(200), deadline=None)
@given(segment_texts, st.sampled_from([{}, {"a": "5"}, {"c": "text"}]))
def test_rendering_segments_together_is_rendering_them_in_turn(texts: list[str], variables: dict) -> None:
    segments = [Segment(f"n{index}", compile_text(text)) for index, text in enumerate(texts)]
    together = render_segments(segments, env=ENV, seed=1, variables=variables)
    state, outputs = dict(variables), []
    global_state: dict[str, Any] = {}
    for segment in segments:
        alone = render_segments([segment], env=ENV, seed=1, variables=state, global_variables=global_state)
        outputs.append(alone.segments[0])
        state, global_state = alone.variables, alone.global_variables
    assert together.segments == tuple(outputs)
    assert together.variables == state
    assert together.global_variables == global_state


def test_a_counter_moves_once_per_render() -> None:
    output = render_nodes("[{{getvar::n}}]", "{{incvar::n}}", variables={"n": "1"})
    assert output.segments[0].text == "[1]"
    assert output.variables == {"n": 2}


def test_warnings_and_unknown_macros_are_reported_once() -> None:
    output = render_nodes("{{roll:bad}}{{foo}}", "{{getvar::late}}", "{{setvar::late::L}}{{bar}}")
    assert [segment.text for segment in output.segments] == ["{{foo}}", "", "{{bar}}"]
    assert len(output.warnings) == 1
    assert output.unknown_macros == {"foo", "bar"}
