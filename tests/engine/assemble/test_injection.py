"""Depth injection (docs/assembly.md#depth-injection) in both styles, tail directives, and the style
choice."""

from __future__ import annotations

from engine import assemble, parse_buckets
from tests.engine.factories import build_preset, depth, make_node, marker

HISTORY = [
    {"role": "user", "name": "Mira", "content": "h1"},
    {"role": "assistant", "name": "Tomori", "content": "h2"},
    {"role": "user", "name": "Mira", "content": "h3"},
    {"role": "assistant", "name": "Tomori", "content": "h4"},
]


def doc(history=HISTORY, **extra):
    return parse_buckets({"system_prompt": "SYS", "history": history, "seed": 1, **extra})


def run(injections, *, style="merge", history=HISTORY, request_style=None, **extra):
    preset = build_preset(
        [make_node("main", content="MAIN"), marker("chatHistory"), *injections], style=style
    )
    return assemble(doc(history, **extra), preset=preset, style=request_style)


def test_merge_appends_a_depth_zero_injection_to_the_last_history_message():
    result = run([depth("d0", "LAST", 0)])
    assert result.messages[-1].content == "h4\n[System: LAST]"
    assert len(result.messages) == 6


def test_merge_targets_length_minus_one_minus_depth():
    result = run([depth("d2", "TWO", 2)])
    assert result.messages[3].content == "h2\n[System: TWO]"


def test_merge_clamps_a_depth_beyond_the_history_to_the_first_item_and_negative_to_zero():
    result = run([depth("deep", "DEEP", 50), depth("neg", "NEG", -3)])
    assert result.messages[2].content == "Mira: h1\n[System: DEEP]"
    assert result.messages[-1].content == "h4\n[System: NEG]"


def test_merge_batches_one_target_deeper_first_then_by_order_then_node_order():
    injections = [
        depth("a", "A-order5", 0, order=5),
        depth("b", "B-order1", 0, order=1),
        depth("c", "C-order1", 0, order=1),
        depth("deep", "DEEP", 9),
    ]
    result = run(injections, history=HISTORY[:1])
    assert result.messages[-1].content == "Mira: h1\n[System: DEEP\nB-order1\nC-order1\nA-order5]"


def test_merge_ignores_the_injection_role():
    result = run([depth("u", "AS USER", 0, role="user")])
    assert result.messages[-1].role == "assistant"
    assert result.messages[-1].content.endswith("[System: AS USER]")


def test_merge_with_no_history_adds_one_trailing_user_item():
    result = run([depth("a", "A", 0), depth("b", "B", 3)], history=[])
    last = result.messages[-1]
    assert last.role == "user" and last.content == "[System: B\nA]"


def test_tail_directives_join_the_depth_one_batch_after_preset_nodes():
    result = run([depth("one", "ONE", 1)], tail_directives=["TAIL"])
    assert result.messages[-2].content == "Mira: h3\n[System: ONE\nTAIL]"
    assert {"kind": "assembler", "name": "tail_directive"} in [
        s.to_dict() for s in result.messages[-2].sources
    ]


def test_native_assembly_merges_tail_directives_too():
    result = assemble(doc(tail_directives=["TAIL"]))
    assert result.messages[-2].content == "Mira: h3\n[System: TAIL]"


def test_standalone_places_exactly_depth_history_messages_after_the_injection():
    result = run([depth("d1", "ONE", 1)], style="standalone")
    contents = [m.content for m in result.messages]
    assert contents[-2:] == ["ONE", "h4"]
    assert contents[-1] == "h4"


def test_standalone_depth_zero_goes_after_the_last_message_and_too_deep_goes_to_the_top():
    result = run([depth("d0", "ZERO", 0), depth("deep", "DEEP", 99)], style="standalone")
    contents = [m.content for m in result.messages]
    assert contents[-1] == "ZERO"
    assert contents[2] == "DEEP" and contents[3] == "Mira: h1"


def test_standalone_groups_by_order_ascending_and_one_message_per_role_system_last():
    injections = [
        depth("s1", "S1", 0, order=1, role="system"),
        depth("u1", "U1", 0, order=1, role="user"),
        depth("a1", "A1", 0, order=1, role="assistant"),
        depth("s1b", "S1b", 0, order=1, role="system"),
        depth("s9", "S9", 0, order=9, role="system"),
    ]
    result = run(injections, style="standalone")
    tail = [(m.role, m.content) for m in result.messages[-4:]]
    assert tail == [("assistant", "A1"), ("user", "U1"), ("system", "S1\nS1b"), ("system", "S9")]


def test_the_style_comes_from_the_preset_and_the_request_may_override_it():
    assert run([depth("d", "X", 0)], style="standalone").style == "standalone"
    overridden = run([depth("d", "X", 0)], style="standalone", request_style="merge")
    assert overridden.style == "merge"
    assert overridden.messages[-1].content == "h4\n[System: X]"


def test_injected_nodes_take_part_in_variables_in_node_order():
    preset = build_preset(
        [
            make_node("main", content="MAIN"),
            depth("d", "{{setvar::x::from depth}}Noted", 0),
            marker("chatHistory"),
            make_node("r", content="x={{getvar::x}}"),
        ]
    )
    result = assemble(doc(), preset=preset)
    assert result.messages[-1].content == "x=from depth"
    assert "h4\n[System: Noted]" in [m.content for m in result.messages]
