"""Properties of extraction and replay over arbitrary input (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.macros.extraction import extract_ops
from engine.macros.replay import WRITE_OPS, OpError, make_op, replay
from tests.engine.fuzzing import examples

MACRO_BITS = st.sampled_from(
    [
        "{{",
        "}}",
        "{",
        "}",
        "::",
        "setvar",
        "addvar",
        "incvar",
        "getvar",
        "\\",
        "a",
        "a.b",
        "0",
        "[",
        "]",
        '"',
        " ",
        "\n",
    ]
)
texts = st.lists(st.one_of(MACRO_BITS, st.text(max_size=5)), max_size=40).map("".join)


@settings(max_examples=examples(200), deadline=None)
@given(texts)
def test_extraction_never_raises_and_replaying_its_ops_gives_the_state_it_reported(text):
    result = extract_ops(text, variables={})
    assert replay([result.ops]).variables == result.variables
    assert len(result.text) <= len(text)


@settings(max_examples=examples(200), deadline=None)
@given(st.text().filter(lambda t: "{" not in t))
def test_text_without_braces_is_left_exactly_as_it_was(text):
    assert extract_ops(text, variables={}).text == text


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(WRITE_OPS),
            st.sampled_from(["hp", "npcs", "npcs.a", "npcs.a.0", "log"]),
            st.text(max_size=12),
        ),
        max_size=30,
    )
)
def test_replay_is_deterministic_and_never_raises(rows):
    ops = []
    for name, key, value in rows:
        try:
            ops.append(make_op(name, key, value))
        except OpError:
            continue
    assert replay([ops]) == replay([ops])
