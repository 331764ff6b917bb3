"""The chat's Author's Note (docs/assembly.md#what-sillytavern-118-corrected, as SillyTavern 1.18 sends it):
in the chat at its depth and role, beside the main prompt, or not at all on the generations its interval
skips."""

from __future__ import annotations

import pytest

from engine import BucketError, assemble, parse_buckets
from tests.engine.factories import build_preset, make_node, marker

HISTORY = [
    {"role": "user", "name": "Ann", "content": "Good evening."},
    {"role": "assistant", "content": "Evening."},
    {"role": "user", "name": "Ann", "content": "Any ships?"},
    {"role": "assistant", "content": "None tonight."},
    {"role": "user", "name": "Ann", "content": "Tell me about the lamp."},
]
PRESET = build_preset(
    [make_node("main", content="Main prompt."), marker("chatHistory"), make_node("jb", content="JB.")]
)


def run(note: dict):
    doc = parse_buckets({"names": {"user": "Ann", "char": "Tess"}, "history": HISTORY, "authors_note": note})
    return assemble(doc, preset=PRESET, style="standalone", seed=1)


def test_the_note_goes_into_the_chat_at_its_depth_with_its_role_and_macros_rendered():
    messages = run({"text": "Keep {{char}} brief.", "depth": 2, "role": "user"}).messages
    contents = [m.content for m in messages]
    at = contents.index("Keep Tess brief.")
    assert messages[at].role == "user"
    assert contents[at + 1 :] == ["None tonight.", "Ann: Tell me about the lamp.", "JB."]


@pytest.mark.parametrize(("position", "offset"), [("after_main", 1), ("before_main", -1)])
def test_the_note_can_sit_beside_the_main_prompt_as_its_own_message(position, offset):
    messages = run({"text": "Present tense.", "position": position, "role": "assistant"}).messages
    contents = [m.content for m in messages]
    main = next(i for i, c in enumerate(contents) if c.endswith("Main prompt."))
    assert contents[main + offset] == "Present tense."
    assert messages[main + offset].role == "assistant"


def test_a_generation_the_interval_skips_sends_no_note_and_says_why():
    result = run({"text": "Remember the storm.", "interval": 4})  # three user messages: not the fourth
    assert not any("Remember the storm." in m.content for m in result.messages)
    assert any("every 4 user messages" in o.reason for o in result.omitted)
    assert any(
        m.content == "Remember the storm."
        for m in run({"text": "Remember the storm.", "interval": 3}).messages
    )


def test_without_a_note_nothing_changes():
    assert [m.content for m in run({}).messages] == [m.content for m in run({"text": "   "}).messages]


@pytest.mark.parametrize(
    "note",
    [{"position": "top"}, {"depth": -1}, {"interval": "2"}, {"role": "narrator"}, "text", {"text": 3}],
)
def test_a_malformed_note_is_refused_with_one_sentence_naming_the_field(note):
    with pytest.raises(BucketError, match="authors_note"):
        parse_buckets({"authors_note": note})


@pytest.mark.parametrize("main_text", ["", "{{// left to the card }}", "{{trim}}"])
@pytest.mark.parametrize("position", ["after_main", "before_main"])
def test_the_note_keeps_the_place_of_an_enabled_main_prompt_that_renders_empty(main_text, position):
    # SillyTavern 1.18 (openai.js, injectToMain) puts the note into main's place whenever the order
    # has an enabled main, whatever it renders: Ann's note still comes first, before the jailbreak node
    preset = build_preset(
        [make_node("main", content=main_text), marker("chatHistory"), make_node("jb", content="JB.")]
    )
    doc = parse_buckets(
        {
            "names": {"user": "Ann", "char": "Tess"},
            "history": HISTORY,
            "authors_note": {"text": "Present tense.", "position": position},
        }
    )
    contents = [m.content for m in assemble(doc, preset=preset, style="standalone", seed=1).messages]
    assert contents[0] == "Present tense."
    assert contents[-1] == "JB." and "" not in contents


@pytest.mark.parametrize("node", [{"enabled": False}, {"injection_trigger": ("impersonate",)}])
def test_a_switched_off_main_prompt_still_gives_the_note_its_place(node):
    # SillyTavern 1.18 (PromptManager.js, getPromptCollection) keeps a switched-off main as an empty
    # prompt "for relative inserts": the note sits where main stands in the order, after the examples
    preset = build_preset(
        [
            make_node("intro", content="Intro."),
            make_node("main", content="Main.", **node),
            marker("chatHistory"),
            make_node("jb", content="JB."),
        ]
    )
    note = {"text": "Present tense.", "position": "after_main"}
    doc = parse_buckets({"names": {"user": "Ann", "char": "Tess"}, "history": HISTORY, "authors_note": note})
    contents = [m.content for m in assemble(doc, preset=preset, style="standalone", seed=1).messages]
    assert contents[:2] == ["Intro.", "Present tense."]
    assert "Main." not in contents
