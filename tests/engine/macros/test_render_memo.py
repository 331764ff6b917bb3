"""A preset's renders are reused only while everything they read is the same (engine/macros/memo.py).

Whatever a memo holds, a render through it must equal a render without it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.macros import MacroEnv, RenderMemo, Segment, compile_text, render_segments
from tests.engine.fuzzing import examples

NOW = datetime(2026, 11, 21, 20, 7, tzinfo=UTC)


def segments(*texts: str) -> list[Segment]:
    return [Segment(f"n{index}", compile_text(text)) for index, text in enumerate(texts)]


def texts(
    memo: RenderMemo, nodes: list[Segment], env: MacroEnv, *, seed: int = 1, variables=None
) -> list[str]:
    output = render_segments(nodes, env=env, seed=seed, variables=variables, memo=memo)
    return [segment.text for segment in output.segments]


def test_a_render_that_reads_only_stable_fields_is_reused_for_the_next_message():
    memo, nodes = (
        RenderMemo(),
        segments("{{setvar::tone::dry}}", "Summary: {{summary}}; tone {{getvar::tone}}"),
    )
    first = render_segments(nodes, env=MacroEnv(summary="S", last_message="one"), seed=1, memo=memo)
    second = render_segments(nodes, env=MacroEnv(summary="S", last_message="two"), seed=1, memo=memo)
    assert second.segments is first.segments  # the kept render, not a new one
    assert second.variables == {"tone": "dry"}


def test_a_new_summary_renders_anew():
    memo, nodes = RenderMemo(), segments("Summary: {{summary}}")
    assert texts(memo, nodes, MacroEnv(summary="old")) == ["Summary: old"]
    assert texts(memo, nodes, MacroEnv(summary="new")) == ["Summary: new"]
    assert texts(memo, nodes, MacroEnv(summary="old")) == ["Summary: old"]


def test_the_last_message_read_by_a_preset_is_always_the_current_one():
    memo, nodes = RenderMemo(), segments("Reply to: {{lastMessage}}")
    for message in ("hello", "a riddle?", "hello"):
        assert texts(memo, nodes, MacroEnv(last_message=message)) == [f"Reply to: {message}"]


def test_a_branch_taken_on_one_field_is_taken_anew_when_that_field_changes():
    memo, nodes = RenderMemo(), segments("{{if description}}card{{else}}{{lastMessage}}{{/if}}")
    assert texts(memo, nodes, MacroEnv(description="d", last_message="x")) == ["card"]
    assert texts(memo, nodes, MacroEnv(description="", last_message="x")) == ["x"]
    assert texts(memo, nodes, MacroEnv(description="", last_message="y")) == ["y"]


def test_a_render_that_drew_is_reused_only_for_its_seed():
    memo, nodes = RenderMemo(), segments("{{roll:1d1000000}}")
    without = [texts(RenderMemo(), nodes, MacroEnv(), seed=seed) for seed in (1, 2, 1)]
    assert [texts(memo, nodes, MacroEnv(), seed=seed) for seed in (1, 2, 1)] == without
    assert without[0] != without[1]


def test_a_render_that_reads_the_clock_is_never_kept():
    memo, nodes = RenderMemo(), segments("{{isotime}}")
    assert texts(memo, nodes, MacroEnv(now=NOW)) == ["20:07"]
    assert texts(memo, nodes, MacroEnv(now=NOW + timedelta(minutes=1))) == ["20:08"]


def test_other_starting_variables_render_anew():
    memo, nodes = RenderMemo(), segments("{{getvar::mood}}")
    assert texts(memo, nodes, MacroEnv(), variables={"mood": "calm"}) == ["calm"]
    assert texts(memo, nodes, MacroEnv(), variables={"mood": "wary"}) == ["wary"]


def test_the_final_variables_of_a_reused_render_are_the_callers_own():
    memo, nodes = RenderMemo(), segments("{{setvar::a::1}}")
    render_segments(nodes, env=MacroEnv(), seed=1, memo=memo).variables["a"] = "changed"
    assert render_segments(nodes, env=MacroEnv(), seed=1, memo=memo).variables == {"a": "1"}


PIECES = [
    "{{setvar::a::1}}", "{{getvar::a}}", "{{getvar::late}}", "{{setvar::late::{{summary}}}}", "{{summary}}",
    "{{lastMessage}}", "{{description}}", "{{if description}}D{{else}}{{lastUserMessage}}{{/if}}",
    "{{roll:1d20}}", "{{random::p::q}}", "{{pick::x::y}}", "{{incvar::n}}", "{{outlet::lore}}", "text ",
    "{{if {{getvar::a}}}}{{personality}}{{/if}}", "{{reasoningPrefix}}",
]  # fmt: skip
VALUES = st.sampled_from(["", "a", "b"])
ENVS = st.builds(
    MacroEnv,
    summary=VALUES,
    last_message=VALUES,
    last_user_message=VALUES,
    description=VALUES,
    personality=VALUES,
    outlets=st.sampled_from([{}, {"lore": "L"}]),
    now=st.just(NOW),
    server_id=st.sampled_from([1, 2]),
)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(PIECES), max_size=5).map("".join), min_size=1, max_size=4),
    st.lists(
        st.tuples(ENVS, st.sampled_from([1, 2]), st.sampled_from([{}, {"a": "1"}])), min_size=2, max_size=5
    ),
)
def test_a_render_through_a_memo_equals_a_render_without_one(texts_: list[str], calls: list) -> None:
    memo, nodes = RenderMemo(), segments(*texts_)
    for env, seed, variables in calls:
        kept = render_segments(nodes, env=env, seed=seed, variables=variables, memo=memo)
        fresh = render_segments(nodes, env=env, seed=seed, variables=variables)
        assert kept == fresh
