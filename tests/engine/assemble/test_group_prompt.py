"""The prompt for a group's speaker (docs/groups.md), on hand-made presets and cards.

Each expectation is what SillyTavern 1.18 sends for the same group (seen through the differential
harness's group cases, docs/fidelity.md), less the deliberate differences.
"""

from __future__ import annotations

import pytest

from engine import assemble, parse_buckets
from engine.buckets import BucketError
from engine.cards import Card, DepthPrompt
from engine.groups import Group, GroupMember
from tests.engine.factories import build_preset, make_node, marker

TOM = Card(
    spec="chara_card_v2",
    name="Old Tom",
    description="{{char}} pours the ale.",
    personality="gruff",
    system_prompt="You are {{char}}.",
    depth_prompt=DepthPrompt("{{char}} watches the door.", 2, "system"),
)
WREN = Card(
    spec="chara_card_v2",
    name="Wren",
    description="{{char}} sings.",
    personality="bright",
    mes_example="{{user}}: Sad song?\n{{char}}: Fine.\nOld Tom: Not again.",
    depth_prompt=DepthPrompt("{{char}} hums.", 2, "system"),
)
BRASK = Card(
    spec="chara_card_v2",
    name="Brask",
    description="{{char}} guards.",
    depth_prompt=DepthPrompt("{{char}} grips the sword.", 2, "user"),
)
HISTORY = [
    {"role": "user", "name": "Ann", "content": "Evening."},
    {"role": "assistant", "name": "Old Tom", "content": "Coin first."},
    {"role": "user", "name": "Mara", "content": "A seat?"},
    {"role": "system", "name": "Narrator", "content": "Rain falls."},
    {"role": "assistant", "name": "Wren", "content": "A song!"},
]
NODES = [
    make_node("main", content="Reply as {{char}}."),
    marker("charDescription"),
    marker("charPersonality"),
    marker("dialogueExamples"),
    marker("chatHistory"),
    make_node("jailbreak", content="Stay in character."),
]


def group(mode="swap", muted=(), prefix="", suffix="") -> Group:
    members = tuple(GroupMember(card, card.name in muted) for card in (TOM, WREN, BRASK))
    return Group("Party", members, mode=mode, join_prefix=prefix, join_suffix=suffix)


def doc(speaker="Wren", generation_type="normal", **turn):
    return parse_buckets(
        {
            "names": {"user": "Ann", "char": speaker},
            "history": HISTORY,
            "seed": 3,
            "generation_type": generation_type,
            "group": {"name": "Party", "speaker": speaker, **turn},
        }
    )


def texts(result) -> list[str]:
    return [m.content for m in result.messages]


def run(the_group, speaker="Wren", settings=None, generation_type="normal", **turn):
    preset = build_preset(NODES, settings=settings or {})
    card = the_group.member(speaker).card
    document = doc(speaker, generation_type, **turn)
    return assemble(document, preset=preset, card=card, group=the_group, style="standalone")


def test_swap_sends_the_speakers_card_and_ends_the_history_with_the_nudge():
    sent = texts(run(group()))
    assert "Wren sings." in sent and "Old Tom pours the ale." not in sent
    assert "[Start a new group chat. Group members: Old Tom, Wren, Brask]" in sent
    assert sent[-2:] == ["[Write the next reply only as Wren.]", "Stay in character."]


def test_every_speaker_is_named_in_the_text_narrator_lines_included():
    sent = texts(run(group()))
    assert "Old Tom: Coin first." in sent and "Narrator: Rain falls." in sent and "Mara: A seat?" in sent


def test_join_modes_join_the_members_fields_in_member_order():
    sent = texts(run(group("join_exclude_muted", muted=("Brask",))))
    assert "Old Tom pours the ale.\nWren sings." in sent
    sent = texts(run(group("join_include_muted", muted=("Brask",))))
    assert "Old Tom pours the ale.\nWren sings.\nBrask guards." in sent


def test_a_join_prefix_names_the_field_and_the_member():
    sent = texts(run(group("join_exclude_muted", prefix="[{{char}}'s <FIELDNAME>: ", suffix="]")))
    assert "[Old Tom's Description: Old Tom pours the ale.]\n[Wren's Description: Wren sings.]" in sent[1]


def test_muted_members_depth_prompts_are_dropped_unless_they_speak():
    sent = texts(run(group("join_include_muted", muted=("Brask",))))
    assert "Old Tom watches the door.\nWren hums." in sent
    assert "Brask grips the sword." not in sent
    spoken = texts(run(group("join_exclude_muted", muted=("Brask",)), speaker="Brask"))
    assert "Brask grips the sword." in spoken and "Brask guards." in "\n".join(spoken)


def test_the_chat_overrides_replace_every_members_field():
    sent = texts(
        run(group("join_include_muted", prefix="<<"), examples_override="{{user}}: Done?\n{{char}}: Yes.")
    )
    assert "Wren: Yes." in sent and not any("Not again" in text for text in sent)


def test_sample_dialogues_in_a_group_are_named_and_follow_another_members_line():
    result = run(group())
    named = [(m.name, m.content) for m in result.messages if m.name.startswith("example_")]
    assert named[0] == ("example_user", "Ann: Sad song?")
    assert named[1] == ("example_assistant", "Old Tom: Wren: Fine.\n Not again.")


def test_the_nudge_is_left_out_for_impersonation_and_when_empty():
    assert not any(
        "Write the next reply" in t for t in texts(run(group(), settings={"group_nudge_prompt": ""}))
    )


def test_the_group_macros_name_the_members():
    settings = {"group_nudge_prompt": "{{group}}|{{groupNotMuted}}|{{notChar}}|{{charIfNotGroup}}"}
    sent = texts(run(group(muted=("Old Tom",)), settings=settings))
    assert "Old Tom, Wren, Brask|Wren, Brask|Brask|Old Tom, Wren, Brask" in sent


def test_outside_a_group_the_group_macros_are_the_character_and_not_char_the_user():
    preset = build_preset(
        [make_node("main", content="{{group}}|{{groupNotMuted}}|{{notChar}}"), marker("chatHistory")]
    )
    solo = parse_buckets({"names": {"user": "Ann", "char": "Wren"}, "history": HISTORY[:1], "seed": 1})
    assert texts(assemble(solo, preset=preset))[0] == "Wren|Wren|Ann"


def test_a_speaker_who_is_not_a_member_is_refused():
    with pytest.raises(ValueError, match="not a member"):
        assemble(doc("Nobody"), card=WREN, group=group())


def test_narrator_lines_are_accepted_only_in_a_group_and_only_named():
    with pytest.raises(BucketError):
        parse_buckets({"history": [{"role": "system", "name": "Narrator", "content": "Rain."}]})
    with pytest.raises(BucketError, match="narrator"):
        parse_buckets(
            {
                "history": [{"role": "system", "content": "Rain."}],
                "group": {"name": "Party", "speaker": "Wren"},
            }
        )


@pytest.mark.parametrize("mode", ["swap", "join_exclude_muted"])
def test_last_chat_message_in_a_groups_continue_nudge_is_the_message_without_its_speakers_name(mode):
    # SillyTavern 1.18 (script.js takes the chat message's own text as cyclePrompt; openai.js trims it
    # into the continue nudge): Wren's unfinished "A song!" is sent as "Wren: A song!" but nudged bare
    sent = texts(
        run(
            group(mode),
            settings={"continue_nudge_prompt": "[Continue from: {{lastChatMessage}}]"},
            generation_type="continue",
        )
    )
    assert sent[-2:] == ["Wren: A song!", "[Continue from: A song!]"]
