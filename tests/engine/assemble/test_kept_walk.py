"""A document's blocks are walked into a preset's order once for texts that render alike
(docs/assembly.md#speed-this-2-core-machine): the next assemblies of the same document send what a first
assembly of it would, notes included, whatever they change afterwards, and texts that render otherwise
are walked again."""

from __future__ import annotations

from engine import assemble, parse_buckets
from tests.engine.factories import build_preset, depth, make_node, marker

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


def preset(main="MAIN for {{char}}"):  # identity macros only: nothing to render
    return build_preset(
        [
            make_node("main", content=main),
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


def sent_across_seeds(compiled, data, pick, seeds=(1, 2, 3, 4, 5, 1, 2)):
    """One document assembled with each seed in turn, each time as a fresh document would be; the
    set of `pick(outcome)` over the seeds."""
    shared = parse_buckets(data)
    seen = set()
    for seed in seeds:
        sent = outcome(assemble(shared, preset=compiled, seed=seed))
        assert sent == outcome(assemble(parse_buckets(data), preset=compiled, seed=seed))
        seen.add(pick(sent))
    return seen


def test_the_next_assemblies_of_a_document_send_what_the_first_did_with_the_same_notes():
    doc, compiled = parse_buckets({**DOCUMENT, "seed": 5}), preset()
    first = outcome(assemble(doc, preset=compiled))
    assert [outcome(assemble(doc, preset=compiled)) for _ in range(3)] == [first] * 3
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


def test_a_text_that_renders_alike_on_every_call_is_placed_alike():
    doc, compiled = parse_buckets({**DOCUMENT, "seed": 5}), preset("Answer to: {{lastUserMessage}}")
    sent = [outcome(assemble(doc, preset=compiled)) for _ in range(3)]
    assert sent == [sent[0]] * 3
    assert ("system", "Answer to: h3") in sent[0][0]


def test_a_text_that_renders_otherwise_is_walked_again():
    compiled = preset("Weather: {{random::rain::sun::fog::snow::hail::wind}}")
    shared = parse_buckets(DOCUMENT)
    for seed in (1, 2, 3, 1, 2, 2, 1):  # wind, sun, sun, wind, …
        fresh = assemble(parse_buckets(DOCUMENT), preset=compiled, seed=seed)
        assert outcome(assemble(shared, preset=compiled, seed=seed)) == outcome(fresh)


def formatted(template):
    return build_preset(
        [make_node("main", content="MAIN"), marker("charPersonality"), marker("chatHistory")],
        settings={"personality_format": template, "squash_system_messages": True},
    )


def test_a_personality_format_that_renders_alike_sends_the_same_squashed_prompt_every_time():
    doc = parse_buckets({**DOCUMENT, "personality": ["curious", "patient"]})
    compiled = formatted("[{{char}} is {{personality}}]{{trim}}")
    sent = [outcome(assemble(doc, preset=compiled, seed=seed)) for seed in (1, 2, 3)]
    assert sent == [sent[0]] * 3
    assert sent[0][0][0] == ("system", "SYS\nMAIN\n[Assistant is curious\npatient]")


def test_a_personality_format_that_renders_otherwise_sends_its_new_text():
    compiled = formatted("{{personality}} today: {{random::calm::cross::merry::tired::bold}}")
    moods = sent_across_seeds(compiled, {**DOCUMENT, "personality": ["curious"]}, lambda sent: sent[0][0][1])
    assert len(moods) > 1


def test_an_injection_whose_text_changes_is_merged_anew_into_the_same_history_message():
    compiled = build_preset(
        [marker("chatHistory"), depth("mood", "Mood: {{random::calm::cross::merry::tired::bold}}", 1)]
    )
    merged = sent_across_seeds(compiled, DOCUMENT, lambda sent: sent[0][-2][1])
    assert len(merged) > 1
    assert all(text.startswith("h2\n[System: Mood: ") for text in merged)


def test_a_single_brace_random_in_a_squashed_prompt_is_drawn_for_each_seed():
    compiled = build_preset(
        [make_node("main", content="MAIN for {{char}}"), marker("chatHistory")],
        settings={"squash_system_messages": True},
    )
    data = {**DOCUMENT, "system_prompt": "SYS, {{user}} feels {random::calm::cross::merry::tired::bold}."}
    prompts = sent_across_seeds(compiled, data, lambda sent: sent[0][0][1])
    assert len(prompts) > 1
    assert all(
        text.startswith("SYS, User feels ") and text.endswith(".\nMAIN for Assistant") for text in prompts
    )


def test_a_prompt_without_the_chat_squashes_alike_each_time_and_anew_when_a_node_changes():
    compiled = build_preset(
        [
            make_node("main", content="Summarise for {{char}}."),
            make_node("tone", content="Tone: {{random::dry::warm::terse::lyrical::plain}}."),
            make_node("last", content="Keep it short."),
        ],
        settings={"squash_system_messages": True},
    )
    sent = sent_across_seeds(compiled, DOCUMENT, lambda sent: tuple(sent[0]), seeds=(1, 1, 2, 3, 4, 5, 1, 2))
    assert {len(messages) for messages in sent} == {1}  # no chat: the prompt and the nodes squashed into one
    assert len(sent) > 1


def test_nodes_whose_texts_change_each_call_are_sent_in_their_places_with_their_new_texts():
    compiled = build_preset(
        [
            make_node("main", content="MAIN"),
            make_node("weather", content="Weather: {{random::rain::sun::fog::snow}}"),
            make_node("ask", role="user", content="Ask about the {{random::map::ledger::moon}}."),
            marker("chatHistory"),
            depth("mood", "Mood: {{random::calm::cross::merry}}", 1),
            make_node("end", content="END"),
        ]
    )
    sent = sent_across_seeds(compiled, DOCUMENT, lambda sent: tuple(sent[0]), seeds=(1, 2, 3, 4, 5, 6, 1, 3))
    assert len(sent) > 2
    for messages in sent:
        assert [role for role, _ in messages] == [
            "system",
            "system",
            "system",
            "user",
            "user",
            "assistant",
            "user",
            "system",
        ]
        assert messages[2][1].startswith("Weather: ") and messages[5][1].startswith("h2\n[System: Mood: ")


def test_nodes_whose_texts_come_and_go_are_sent_only_when_they_have_one():
    compiled = build_preset(
        [
            make_node("main", content="MAIN"),
            make_node("extra", content="{{random::Extra rule.::}}"),
            make_node("hello", role="user", content="{{random::Say hi.::}}"),
            marker("chatHistory"),
            depth("deep", "{{random::Deep.::}}", 1),
        ],
        settings={"squash_system_messages": True},
    )
    sent = sent_across_seeds(
        compiled, DOCUMENT, lambda sent: tuple(sent[0]), seeds=(1, 2, 3, 4, 5, 6, 7, 8, 1, 2)
    )
    prompts = {messages[0][1] for messages in sent}
    assert prompts == {"SYS\nMAIN", "SYS\nMAIN\nExtra rule."}
    assert {("user", "Say hi.") in messages for messages in sent} == {True, False}
    assert {any("Deep." in text for _, text in messages) for messages in sent} == {True, False}


def test_a_squashed_run_around_drawn_nodes_is_sent_as_a_fresh_document_would_send_it():
    # A run of system nodes after the history, some drawing among a few texts on every assembly and one
    # resolving a `{random}` form at the end: the joined message is made from the last one's pieces
    # (engine/assemble/spliced.py) and a node's item comes back for a text it gave before.
    nodes = [make_node("main", content="MAIN"), marker("chatHistory")]
    for n in range(12):
        text = f"Rule {n} for {{{{user}}}}."
        if n % 4 == 1:
            text = f"Rule {n}: {{{{random::calm::stern::sly}}}} with {{{{char}}}}."
        if n == 6:
            text = "Mood: {random::warm::cold}."
        nodes.append(make_node(f"rule{n}", content=text))
    compiled = build_preset(nodes, settings={"squash_system_messages": True})
    seeds = (*range(1, 30), 3, 7, 3)
    last = sent_across_seeds(compiled, DOCUMENT, lambda sent: sent[0][-1], seeds=seeds)
    assert len(last) > 4  # the drawn texts changed the joined message
    assert all(content.count("Rule") == 11 and "Mood: " in content for _role, content in last)
