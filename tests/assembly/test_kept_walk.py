"""A preset with nothing to render walks a document's blocks once (docs/assembly.md#speed-this-2-core-machine):
the next assemblies of the same document send what a first assembly of it would, notes included,
whatever they change afterwards."""

from __future__ import annotations

from engine import assemble, parse_buckets
from tests.factories import build_preset, depth, make_node, marker

HISTORY = [
    {"role": "user", "name": "Mira", "content": "h1"},
    {"role": "assistant", "name": "Tomori", "content": "h2"},
    {"role": "user", "name": "Mira", "content": "h3"},
]
DOCUMENT = {
    "system_prompt": "SYS",
    "history": HISTORY,
    "tail_directives": ["Stay brief."],
}


def preset():
    return build_preset(
        [
            make_node("main", content="MAIN for {{char}}"),  # identity macros only: nothing to render
            marker("chatHistory"),
            depth("note", "DEPTH ONE", 1),
            marker("someMarkerNobodyKnows"),  # warned at assembly
            make_node("cont", content="ONLY ON CONTINUE", injection_trigger=["continue"]),  # omitted
        ]
    )


def outcome(result):
    return (
        [(m.role, m.content) for m in result.messages],
        list(result.warnings),
        [(o.what, o.reason) for o in result.omitted],
    )


def test_the_second_assembly_of_a_document_sends_what_the_first_did_with_the_same_notes():
    doc, compiled = parse_buckets({**DOCUMENT, "seed": 5}), preset()
    first = outcome(assemble(doc, preset=compiled))
    again = outcome(assemble(doc, preset=compiled))
    assert again == first
    messages, warnings, omitted = first
    assert any("someMarkerNobodyKnows" in sentence for sentence in warnings)
    assert any("this is a normal generation" in reason for _what, reason in omitted)
    assert ("system", "MAIN for Assistant") in messages
    assert ("assistant", "h2\n[System: DEPTH ONE\nStay brief.]") in messages


def test_what_one_assembly_changes_does_not_reach_the_next_one_of_the_same_document():
    compiled = preset()
    shared = parse_buckets({**DOCUMENT, "seed": 5})
    for style in ("standalone", "merge", "standalone"):
        fresh = assemble(parse_buckets({**DOCUMENT, "seed": 5}), preset=compiled, style=style)
        assert outcome(assemble(shared, preset=compiled, style=style)) == outcome(fresh)


def test_a_second_preset_on_the_same_document_walks_its_own_nodes():
    doc = parse_buckets({**DOCUMENT, "seed": 5})
    assemble(doc, preset=preset())
    other = build_preset([marker("chatHistory"), make_node("after", content="AFTER")])
    sent = [m.content for m in assemble(doc, preset=other).messages]
    assert sent[-1] == "AFTER"
    assert "DEPTH ONE" not in "\n".join(sent)
