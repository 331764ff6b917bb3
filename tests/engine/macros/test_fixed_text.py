"""A node whose only macros are names, plain comments and `{{trim}}` is worked out once, when the preset's
plan is made (docs/macros.md#macros): what the bot sends must not depend on whether the plan or a render
made the text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import assemble, compile_preset, parse_buckets
from engine.macros import MacroEnv, Segment, compile_text, render_segments, static_text
from engine.macros.render import MAX_EVALUATIONS
from engine.st_format import PromptSettings
from tests.engine.factories import make_node, marker
from tests.engine.fuzzing import examples

NAMES_AND_COMMENTS = [
    "Write {{char}}'s next reply to {{user}}.",
    "{{ Char }} and {{USER}} and {{bot}}",
    "{{char!}} reads past a stray character",
    "{{user::x}} is left as written",
    "{{// a note for the preset's author}}Hello {{user}}",
    "{{//}}a scoped note{{///}}<rules>{{char}}</rules>",
    "{{user}}, not \\{{char}}: the escaped one stays",
    "{{trim}}",
    "{{// a note}}\n{{trim}}\nRules for {{char}}\r\n{{trim}}\r\n\nend",
    "\n\n{{ trim }}\n\n{{//x}}{{trim}}",
]


def rendered(text: str) -> str:
    output = render_segments([Segment("node", compile_text(text))], env=MacroEnv(), seed=7)
    assert not output.warnings
    return output.segments[0].text


@pytest.mark.parametrize("text", NAMES_AND_COMMENTS)
def test_a_node_of_names_and_comments_is_sent_as_a_render_would_make_it(text):
    fixed = static_text(compile_text(text))
    assert fixed is not None, "names and plain comments need no render"
    assert fixed[0] == rendered(text)


@pytest.mark.parametrize(
    "text",
    [
        "{{random::a::b}}",
        "{{getvar::mood}}",
        "{{// {{setvar::x::1}} }}hidden write",
        "{{lastUserMessage}}",
        "{{time}}",
        "{{trim::x}}",
        "{{trim}}{{setvar::x::1}}",
    ],
)
def test_a_node_that_reads_draws_or_writes_is_rendered_every_time(text):
    assert static_text(compile_text(text)) is None


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "{{user}}",
                "{{char}}",
                "{{ CHAR }}",
                "{{//note}}",
                "{{trim}}",
                "\n",
                "\r\n",
                "text ",
                "{",
                "}",
                "\\",
                "<user>",
            ]
        ),
        max_size=12,
    )
)
def test_any_mix_of_names_comments_and_braces_gives_the_render_s_text(pieces):
    text = "".join(pieces)
    template = compile_text(text)
    fixed = static_text(template)
    if fixed is not None:
        assert fixed[0] == rendered(text)


def test_names_in_a_fixed_node_still_take_the_budget_of_evaluations_in_order():
    # Past the pass's evaluation budget, a name is left as written; a fixed node counts its names.
    many = "{{user}}" * (MAX_EVALUATIONS // 2 + 1)
    fixed = static_text(compile_text(many))
    assert fixed is not None
    nodes = [Segment("a", compile_text(many), *fixed), Segment("b", compile_text(many))]
    with_fixed = render_segments(nodes, env=MacroEnv(), seed=1)
    plain = [Segment("a", compile_text(many)), Segment("b", compile_text(many))]
    rendered_all = render_segments(plain, env=MacroEnv(), seed=1)
    assert [s.text for s in with_fixed.segments] == [s.text for s in rendered_all.segments]


def document(user: str, char: str) -> dict:
    return {
        "version": 1,
        "names": {"user": user, "char": char},
        "history": [{"role": "user", "name": user, "content": "Hi!"}],
    }


def test_alice_s_preset_of_names_sends_her_and_the_character_s_names_on_every_assembly():
    preset = compile_preset(
        preset_id=1,
        name="Names",
        injection_style="merge",
        settings=PromptSettings(),
        nodes=[make_node("main", content="You are {{char}}; {{user}} is here."), marker("chatHistory")],
    )
    alice = parse_buckets(document("Alice", "Tomori"))
    first = assemble(alice, preset=preset, count_tokens=False, seed=1)
    again = assemble(alice, preset=preset, count_tokens=False, seed=2)
    assert first.messages[0].content == "You are Tomori; Alice is here."
    assert [m.content for m in again.messages] == [m.content for m in first.messages]
    bob = parse_buckets(document("Bob", "Quill"))  # the same preset, the next server's names
    assert (
        assemble(bob, preset=preset, count_tokens=False).messages[0].content == "You are Quill; Bob is here."
    )
