"""The two-pass rule, checked against a plain reference: pass 1 over everything, pass 2 over everything.

`render_segments` skips work (pass 1 only renders writers once a key was read too early, pass 2
resumes where the passes start to differ and replays the segments whose inputs did not change); the
results must be the same as the plain way.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.macros import MacroEnv, Segment, compile_text, render_segments
from engine.macros.render import _Pass

from .conftest import render_nodes

NOW = datetime(2026, 11, 21, 20, 7, tzinfo=UTC)
ENV = MacroEnv(now=NOW, description="desc")


def reference(segments: list[Segment], seed: int, variables: dict) -> tuple:
    first = _Pass(ENV, seed, NOW, dict(variables), {}, None, None, {}, label=True)
    for segment in segments:
        first.render(segment)
    second = _Pass(
        ENV, seed, NOW, dict(variables), {}, first.local.values, first.global_.values, {}, label=True
    )
    outputs = tuple(second.render(segment) for segment in segments)
    return (
        outputs,
        second.local.values,
        second.global_.values,
        tuple(dict.fromkeys(second.warnings)),
        set(second.unknown),
    )


PIECES = [
    "{{setvar::a::1}}", "{{setvar::b::{{getvar::a}}x}}", "{{getvar::a}}", "{{getvar::b}}", "{{getvar::c}}",
    "{{incvar::c}}", "{{addvar::a::2}}", "{{deletevar::a}}", "{{roll:1d6}}", "{{random::p::q::r}}",
    "{{setglobalvar::g::{{roll:1d20}}}}", "{{getglobalvar::g}}", "{{foo}}", "{{roll:bad}}", "{{description}}",
    "{{each::[1,2]}}{{incvar::n}}{{/each}}", "{{getvar::n}}", "text ", "{{// {{setvar::c::7}} }}", "{{pick::x::y}}",
    "{{setvar::a::{{getvar::c}}}}", "{{addvar::b::{{getvar::g}}}}", "{{setglobalvar::g::{{getvar::b}}}}",
]  # fmt: skip

segment_texts = st.lists(st.lists(st.sampled_from(PIECES), max_size=6).map("".join), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(segment_texts, st.integers(0, 1000), st.sampled_from([{}, {"a": "5"}, {"c": "text"}]))
def test_render_segments_matches_two_plain_passes(texts: list[str], seed: int, variables: dict) -> None:
    segments = [Segment(f"n{index}", compile_text(text)) for index, text in enumerate(texts)]
    output = render_segments(segments, env=ENV, seed=seed, variables=variables)
    outputs, local, global_, warnings, unknown = reference(segments, seed, variables)
    assert output.segments == outputs
    assert output.variables == local
    assert output.global_variables == global_
    assert output.warnings == warnings
    assert output.unknown_macros == unknown


def test_warnings_and_unknown_macros_before_a_forward_read_are_kept_once() -> None:
    output = render_nodes("{{roll:bad}}{{foo}}", "{{getvar::late}}", "{{setvar::late::L}}{{bar}}")
    assert [segment.text for segment in output.segments] == ["{{foo}}", "L", "{{bar}}"]
    assert len(output.warnings) == 1
    assert output.unknown_macros == {"foo", "bar"}


def test_a_read_of_a_key_nobody_writes_renders_empty() -> None:
    output = render_nodes("[{{getvar::never}}]", "{{setvar::other::1}}")
    assert output.segments[0].text == "[]"


def test_a_node_fed_by_a_re_rendered_node_shows_the_second_pass_value() -> None:
    # "early" reads `late` before it is written; "copy" depends on what "early" stores, so it must
    # render again in pass 2 even though its own text never reads ahead.
    output = render_nodes(
        "{{setvar::seen::[{{getvar::late}}]}}",
        "{{setvar::copy::{{getvar::seen}}!}}{{getvar::copy}}",
        "{{setvar::late::L}}",
        "{{getvar::copy}}",
    )
    assert [segment.text for segment in output.segments] == ["", "[L]!", "", "[L]!"]
    assert output.variables == {"seen": "[L]", "copy": "[L]!", "late": "L"}


def test_a_writer_after_a_forward_read_that_reads_nothing_ahead_keeps_its_draws() -> None:
    output = render_nodes("{{getvar::late}}", "{{setvar::late::{{roll:1d1000000}}}}{{getvar::late}}")
    assert output.segments[0].text == output.segments[1].text
