"""Issue 34: the assembler rules SillyTavern 1.18 showed on cases the harness did not cover, and the
deliberate differences the preview names.

Each expectation is what SillyTavern 1.18.0 sent for the fidelity case named in the test
(docs/fidelity.md), on a hand-made preset of the same kind.
"""

from __future__ import annotations

from engine import assemble, parse_buckets
from engine.cards import Card, read_card
from engine.worldinfo import WorldInfoInput, compile_book, convert_character_book
from tests.engine.factories import build_preset, make_node, marker
from tests.present import present

HISTORY = [
    {"role": "user", "name": "Ann", "content": "Is the lamp lit?"},
    {"role": "assistant", "name": "Tess", "content": "It is."},
]


def doc(**fields):
    return parse_buckets({"names": {"user": "Ann", "char": "Tess"}, "history": HISTORY, "seed": 3, **fields})


def texts(result) -> list[str]:
    return [m.content for m in result.messages]


SAMPLES = [{"user": "Where is the boat?", "char": "At the pier."}]


def test_an_order_without_dialogue_examples_sends_no_sample_dialogues_and_says_so():
    # own-examples-absent
    without = build_preset([make_node("main", content="MAIN"), marker("chatHistory")])
    result = assemble(doc(sample_dialogues=SAMPLES), preset=without)
    assert not any("pier" in t for t in texts(result))
    assert any("dialogueExamples" in o.reason for o in result.omitted)
    with_marker = build_preset(
        [make_node("main", content="MAIN"), marker("dialogueExamples"), marker("chatHistory")]
    )
    assert any("pier" in t for t in texts(assemble(doc(sample_dialogues=SAMPLES), preset=with_marker)))


def test_send_if_empty_is_the_users_message_after_the_characters():
    # own-send-if-empty: SillyTavern sent "[User waits for Tess.]" as the last chat message
    preset = build_preset(
        [make_node("main", content="MAIN"), marker("chatHistory"), make_node("jailbreak", content="JB")],
        settings={"send_if_empty": "  [{{user}} waits for {{char}}.]  "},
    )
    result = assemble(doc(), preset=preset)
    assert [(m.role, m.content) for m in result.messages][-2:] == [
        ("user", "Ann: [Ann waits for Tess.]"),
        ("system", "JB"),
    ]
    after_user = assemble(
        doc(history=[*HISTORY, {"role": "user", "name": "Ann", "content": "Well?"}]), preset=preset
    )
    assert not any("waits" in t for t in texts(after_user))
    continuing = assemble(doc(generation_type="continue"), preset=preset)
    assert not any("waits" in t for t in texts(continuing))


def test_the_preview_names_a_clamped_roll_and_a_dotted_getvar():
    preset = build_preset(
        [make_node("main", content="{{roll:200d6}} {{getvar::hero.name}}"), marker("chatHistory")],
    )
    differences = assemble(doc(), preset=preset).differences
    assert any("{{roll}} is limited to 100 dice" in d and "200d6" in d for d in differences)
    assert any("dotted name" in d for d in differences)
    plain = build_preset([make_node("main", content="{{roll:2d6}}"), marker("chatHistory")])
    assert not any("limited" in d for d in assemble(doc(), preset=plain).differences)


def test_the_card_import_and_the_preview_name_the_embedded_book():
    raw = (
        b'{"spec": "chara_card_v2", "data": {"name": "Tess", "character_book": {"entries": '
        b'[{"keys": ["lamp"], "content": "The lamp burns oil.", "insertion_order": 100, "enabled": true}]}}}'
    )
    read = read_card(raw)
    assert any("embedded lorebook" in w and "SillyTavern 1.18" in w for w in read.warnings)
    entries, _summary = convert_character_book(present(read.card.character_book))
    books = (compile_book("Tess", entries, is_character=True),)
    preset = build_preset(
        [make_node("main", content="MAIN"), marker("worldInfoBefore"), marker("chatHistory")]
    )
    result = assemble(
        doc(history=[{"role": "user", "name": "Ann", "content": "the lamp"}]),
        preset=preset,
        card=Card(spec="chara_card_v2", name="Tess"),
        world_info=WorldInfoInput(books=books),
    )
    assert "The lamp burns oil." in texts(result)
    assert any("embedded lorebook" in d for d in result.differences)


SERVER_BLOCKS = "The server's own blocks"


def test_the_server_blocks_sent_are_named_as_a_difference_and_only_when_sent():
    preset = build_preset([make_node("main", content="MAIN"), marker("chatHistory")])
    with_info = assemble(doc(server_info="Server: The Lantern Guild."), preset=preset)
    assert any("The Lantern Guild" in t for t in texts(with_info))
    assert any(d.startswith(SERVER_BLOCKS) for d in with_info.differences)
    without = assemble(doc(), preset=preset)
    assert not any(d.startswith(SERVER_BLOCKS) for d in without.differences)
    # a long chat with no server block in it says nothing of them either
    chat = [{"role": "user", "name": "Ann", "content": f"Line {i}"} for i in range(50)]
    assert not any(
        d.startswith(SERVER_BLOCKS) for d in assemble(doc(history=chat), preset=preset).differences
    )
