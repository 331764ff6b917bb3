"""docs/import.md#post-history-instructions: post-history instructions of every shape become depth-0 system
nodes."""

from __future__ import annotations

from .conftest import node, pm_preset, prompt


def _post_nodes(parsed) -> list[tuple[str, str]]:
    return [(n.identifier, n.content) for n in parsed.nodes if "post_history" in n.identifier]


def test_all_three_sources_become_nodes_in_order_with_depth_0_and_order_10000(parse) -> None:
    data = {
        "context": {"story_string": "{{#if system}}{{system}}{{/if}}", "post_history": "C"},
        "sysprompt": {"content": "S", "post_history": "  B  "},
        "post_history": "A",
    }
    parsed = parse(data)
    assert _post_nodes(parsed) == [
        ("post_history", "A"),
        ("sysprompt_post_history", "B"),
        ("context_post_history", "C"),
    ]
    assert [n.identifier for n in parsed.nodes][-3:] == [
        "post_history",
        "sysprompt_post_history",
        "context_post_history",
    ]
    ph = node(parsed, "post_history")
    assert (ph.role, ph.injection_position, ph.injection_depth, ph.injection_order) == ("system", 1, 0, 10000)
    assert ph.kind == "content" and ph.enabled


def test_a_system_prompt_preset_keeps_its_post_history(parse) -> None:
    parsed = parse({"name": "Actor", "content": "Act.", "post_history": "Stay in role."})
    assert [n.identifier for n in parsed.nodes] == ["main", "chatHistory", "post_history"]


def test_a_prompt_manager_preset_gets_post_history_too(parse) -> None:
    parsed = parse(pm_preset([prompt("main", "M")], post_history="Remember."))
    assert _post_nodes(parsed) == [("post_history", "Remember.")]


def test_a_post_history_equal_to_an_earlier_one_is_skipped(parse) -> None:
    data = {"name": "n", "content": "c", "post_history": "Same", "sysprompt": {"post_history": " Same\n"}}
    assert _post_nodes(parse(data)) == [("post_history", "Same")]


def test_a_post_history_equal_to_an_existing_depth_node_is_skipped(parse) -> None:
    depth_node = prompt("tail", "Remember.", role="system", injection_position=1, injection_depth=0)
    assert _post_nodes(parse(pm_preset([depth_node], post_history="Remember."))) == []


def test_an_empty_post_history_makes_no_node(parse) -> None:
    assert _post_nodes(parse({"name": "n", "content": "c", "post_history": "  \n"})) == []


def test_template_tokens_are_stripped_from_a_legacy_post_history(parse) -> None:
    data = {"name": "n", "content": "c", "post_history": "<|im_start|>system\nStay brief.<|im_end|>"}
    parsed = parse(data)
    assert _post_nodes(parsed) == [("post_history", "Stay brief.")]
    assert any("post-history instructions: <|im_start|>, <|im_end|>." in w for w in parsed.summary.warnings)


def test_a_prompt_manager_post_history_is_kept_as_written(parse) -> None:
    parsed = parse(pm_preset([prompt("main", "M")], post_history="Use <s> tags."))
    assert _post_nodes(parsed) == [("post_history", "Use <s> tags.")]
