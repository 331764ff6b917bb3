"""The same conversation asked for again (a swipe, a regenerate, a preview shown again) gets what a
first assembly of it would: the steps from the openers to the messages, kept with the document
(docs/assembly.md#the-kept-tail), never hand over a prompt that another seed, another style or
another memory would have made otherwise."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import assemble, parse_buckets
from engine.assemble import StoredStm
from engine.buckets import StmLine
from tests.engine.factories import build_preset, depth, make_node, marker
from tests.engine.fuzzing import examples

TEXT = st.text(alphabet=st.sampled_from(list("ab {}:/|<>\\n#xyz")), max_size=24) | st.sampled_from(
    ["{random::one::two::three}", "{{user}} and {{char}}", "{{random::a::b}}", "<USER>", "{{setvar::x::1}}"]
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]), "name": TEXT, "content": TEXT}
)
DOCUMENT = st.fixed_dictionaries(
    {
        "system_prompt": st.none() | TEXT,
        "persona_prompt": TEXT,
        "scenario": TEXT,
        "history": st.lists(MESSAGE, max_size=6),
        "tail_directives": st.lists(TEXT, max_size=2),
        "sample_dialogues": st.lists(st.fixed_dictionaries({"user": TEXT, "char": TEXT}), max_size=2),
        "authors_note": st.none() | st.fixed_dictionaries({"text": TEXT, "depth": st.integers(0, 3)}),
    }
)
NODES = [
    make_node("main", content="Main for {{char}} {random::red::blue::green}"),
    marker("dialogueExamples"),
    marker("scenario"),
    marker("personaDescription"),
    marker("chatHistory"),
    depth("d1", "Stay {{getvar::x}}", 1),
    make_node("jailbreak", content="Jailbreak"),
]
PRESETS = {
    "drawing": build_preset(NODES, settings={"squash_system_messages": True}),
    "plain": build_preset(
        [make_node("main", content="Be {{char}}."), *NODES[1:]],
        settings={"new_chat_prompt": "[Start]", "new_example_chat_prompt": "[Example]"},
    ),
    "squashed": build_preset(
        [make_node("main", content="Be {{char}}."), *NODES[1:]],
        settings={"squash_system_messages": True, "new_chat_prompt": "[Start]"},
    ),
    "no chat": build_preset([make_node("main", content="Summarise."), depth("d1", "Deep", 1)]),
}
MEMORY = StoredStm(
    lines=(StmLine(role="system", text="They met at the harbour.", same_channel=True),),
    tail_directive="Be kind.",
)


def sent(result):
    return result.to_dict()


@settings(
    max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=DOCUMENT,
    preset=st.sampled_from(sorted(PRESETS)),
    asks=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=5),
            st.sampled_from([None, "merge", "standalone"]),
            st.booleans(),
        ),
        min_size=2,
        max_size=4,
    ),
)
def test_asking_again_for_a_conversation_sends_what_a_first_assembly_of_it_would(data, preset, asks):
    shared = parse_buckets(data)
    for seed, style, remembered in asks:
        stm = MEMORY if remembered else None
        for swipe in range(3):  # the third of the same asks is handed what the second kept
            again = assemble(shared, preset=PRESETS[preset], seed=seed + swipe, style=style, stm=stm)
            first = assemble(
                parse_buckets(data), preset=PRESETS[preset], seed=seed + swipe, style=style, stm=stm
            )
            assert sent(again) == sent(first)


def swipes(data, preset, **asked):
    """The messages' texts of one conversation asked for with each of 40 seeds in turn, each the
    same as a first assembly of the conversation with that seed."""
    shared, texts = parse_buckets(data), set()
    for seed in range(40):
        again = assemble(shared, preset=preset, seed=seed, **asked)
        assert sent(again) == sent(assemble(parse_buckets(data), preset=preset, seed=seed, **asked))
        texts.add("\n".join(m.content for m in again.messages))
    return texts


HELLO = [{"role": "user", "name": "Mira", "content": "Hello"}]
SQUASHED = PRESETS["squashed"]


def test_a_swipe_after_the_style_changed_sends_the_new_styles_prompt():
    data = {"history": HELLO * 3, "tail_directives": ["Short."]}
    shared = parse_buckets(data)
    for style in ("merge", "merge", "merge", "standalone", "standalone", "merge"):
        again = assemble(shared, preset=SQUASHED, seed=1, style=style)
        assert sent(again) == sent(assemble(parse_buckets(data), preset=SQUASHED, seed=1, style=style))


def test_a_swipe_with_the_memory_changed_sends_the_new_memorys_directive():
    shared = parse_buckets({"history": HELLO * 3})
    for stm in (None, None, None, MEMORY, MEMORY, None):
        texts = [m.content for m in assemble(shared, preset=SQUASHED, seed=1, stm=stm).messages]
        assert ("Be kind." in "\n".join(texts)) is (stm is not None)


def test_a_swipe_renders_the_authors_notes_macros_anew():
    data = {"history": HELLO * 3, "authors_note": {"text": "Mood: {{random::calm::wild}}", "depth": 1}}
    texts = swipes(data, SQUASHED)
    assert any("Mood: calm" in text for text in texts)
    assert any("Mood: wild" in text for text in texts)


def test_a_swipe_renders_the_example_separators_macros_anew():
    preset = build_preset(
        [marker("dialogueExamples"), marker("chatHistory")],
        settings={"new_example_chat_prompt": "[Example {{random::one::two}}]"},
    )
    data = {"history": HELLO, "sample_dialogues": [{"user": "Hi", "char": "Hello there."}]}
    texts = swipes(data, preset)
    assert any("[Example one]" in text for text in texts)
    assert any("[Example two]" in text for text in texts)


def test_a_swipe_draws_the_main_prompts_random_pick_anew_every_time():
    data = {"history": [{"role": "user", "name": "Mira", "content": "Hello"}]}
    shared = parse_buckets(data)
    picks = {assemble(shared, preset=PRESETS["drawing"], seed=seed).messages[0].content for seed in range(40)}
    assert picks == {"Main for Assistant red", "Main for Assistant blue", "Main for Assistant green"}


def test_a_swipe_draws_a_sample_dialogues_random_pick_anew_every_time():
    data = {"history": HELLO, "sample_dialogues": [{"user": "Hi", "char": "I wear {random::silk::wool}."}]}
    texts = swipes(data, PRESETS["plain"])
    assert any("I wear silk." in text for text in texts)
    assert any("I wear wool." in text for text in texts)


def test_a_swipe_keeps_the_warnings_and_omissions_of_the_first_assembly():
    data = {"history": HELLO, "tail_directives": ["Short."]}
    shared = parse_buckets(data)
    first = assemble(shared, preset=PRESETS["no chat"], seed=1)
    assert first.omitted  # the tail directive and the depth node have no chat to land in
    for seed in (2, 3, 4):
        again = assemble(shared, preset=PRESETS["no chat"], seed=seed)
        assert (again.warnings, again.omitted) == (first.warnings, first.omitted)


def test_a_swipe_renders_the_new_chat_prompts_macros_anew():
    preset = build_preset(
        [make_node("main", content="Be {{char}}."), marker("chatHistory")],
        settings={"new_chat_prompt": "[Start {{random::one::two}}]"},
    )
    texts = swipes({"history": HELLO}, preset)
    assert any("[Start one]" in text for text in texts)
    assert any("[Start two]" in text for text in texts)
