"""What an active character card does to the prompt (docs/cards.md), rule by rule."""

from __future__ import annotations

from engine import assemble, parse_buckets
from engine.cards import Card, DepthPrompt
from tests.engine.factories import build_preset, depth, make_node, marker

CARD = Card(
    spec="chara_card_v3",
    name="Mira",
    description="A lighthouse keeper with salt in her hair.",
    personality="patient, wry",
    scenario="A storm rolls over the harbour.",
    mes_example="<START>\n{{user}}: Is the lamp lit?\n{{char}}: Always.",
    system_prompt="Card prompt before. {{original}} Card prompt after.",
    post_history_instructions="Card says: stay brief. {{original}}",
    depth_prompt=DepthPrompt(prompt="Mira hums an old tune.", depth=1, role="assistant"),
)
HISTORY = [
    {"role": "user", "name": "Ann", "content": "Hello there."},
    {"role": "assistant", "content": "Evening."},
    {"role": "user", "name": "Ann", "content": "Any ships tonight?"},
]


def doc(**fields):
    return parse_buckets({"names": {"user": "Ann"}, "history": HISTORY, **fields})


def preset(*, forbid_main: bool = False, scenario_format: str = "{{scenario}}"):
    return build_preset(
        [
            make_node("main", content="Preset main text.", forbid_overrides=forbid_main),
            marker("charDescription"),
            marker("charPersonality"),
            marker("scenario"),
            marker("dialogueExamples"),
            marker("chatHistory"),
            make_node("jailbreak", content="Preset jailbreak text."),
        ],
        settings={"scenario_format": scenario_format},
    )


def text_from(assembly, kind: str, field: str) -> str:
    return "".join(
        piece
        for message in assembly.messages
        for source, piece in message.pieces
        if source.kind == kind and source.name == field
    )


def test_the_cards_fields_fill_the_documents_empty_fields():
    result = assemble(doc(), preset=preset(), card=CARD, seed=1)
    everything = "\n".join(m.content for m in result.messages)
    assert "A lighthouse keeper with salt in her hair." in everything
    assert "patient, wry" in everything
    turns = [(m.name, m.content) for m in result.messages if m.name]
    assert turns == [("example_user", "Is the lamp lit?"), ("example_assistant", "Always.")]


def test_the_bots_own_values_win_over_the_cards():
    mine = doc(persona_prompt="The bot's own persona.", names={"user": "Ann", "char": "Tomori"})
    result = assemble(mine, preset=preset(), card=CARD, seed=1)
    everything = "\n".join(m.content for m in result.messages)
    assert "The bot's own persona." in everything and "salt in her hair" not in everything
    # {{char}} in the card's examples is the bot's name: "Tomori:" opens the character's turn
    assert ("example_assistant", "Always.") in [(m.name, m.content) for m in result.messages]


def test_the_system_prompt_replaces_mains_text_with_original_once_and_later_originals_empty():
    # SillyTavern 1.18 (MacroEnvBuilder.js, the one-shot `original`): the first fills, the rest are empty
    card = Card(spec="chara_card_v3", name="Mira", system_prompt="A {{original}} B {{ORIGINAL}}.")
    result = assemble(doc(), preset=preset(), card=card, seed=1)
    assert text_from(result, "card", "system_prompt") == "A Preset main text. B ."
    assert "{{original}}" not in "\n".join(m.content for m in result.messages).lower()


def test_post_history_instructions_fill_original_once_too():
    card = Card(spec="chara_card_v3", name="Mira", post_history_instructions="{{original}}|{{original}}|")
    result = assemble(doc(), preset=preset(), card=card, seed=1)
    assert text_from(result, "card", "post_history_instructions").endswith("||")


def test_forbid_overrides_keeps_the_presets_main_text():
    result = assemble(doc(), preset=preset(forbid_main=True), card=CARD, seed=1)
    assert text_from(result, "card", "system_prompt") == ""
    assert any("Preset main text." in m.content for m in result.messages)


def test_post_history_instructions_replace_the_jailbreak_text():
    result = assemble(doc(), preset=preset(), card=CARD, seed=1)
    assert (
        text_from(result, "card", "post_history_instructions")
        == "Card says: stay brief. Preset jailbreak text."
    )
    assert result.messages[-1].content.endswith("Card says: stay brief. Preset jailbreak text.")


def test_the_depth_prompt_is_injected_at_its_depth_with_its_role():
    result = assemble(doc(), preset=preset(), card=CARD, style="standalone", seed=1)
    injected = [
        m for m in result.messages if any(s.kind == "card" and s.name == "depth_prompt" for s in m.sources)
    ]
    assert [(m.role, m.content) for m in injected] == [("assistant", "Mira hums an old tune.")]
    history = [m for m in result.messages if m.history or m is injected[0]]
    assert history[-2] is injected[0]  # depth 1: before the newest message


def test_the_scenario_fills_the_scenario_marker_through_scenario_format():
    result = assemble(doc(), preset=preset(scenario_format="[Scene: {{scenario}}]"), card=CARD, seed=1)
    assert any("[Scene: A storm rolls over the harbour.]" in m.content for m in result.messages)
    assert text_from(result, "card", "scenario") == "A storm rolls over the harbour."


def test_without_a_scenario_marker_the_scenario_comes_after_the_last_node_as_in_sillytavern():
    no_marker = build_preset([make_node("main", content="Main."), marker("chatHistory")])
    result = assemble(doc(), preset=no_marker, card=CARD, seed=1)
    assert result.messages[-1].content == "A storm rolls over the harbour."
    assert not any(o.what == "The scenario." for o in result.omitted)


def test_the_character_macros_read_the_cards_other_fields():
    card = Card(
        spec="chara_card_v3",
        name="Mira",
        system_prompt="  Keep the lamp.  ",
        post_history_instructions="Answer in one line.\r",
        creator_notes=" Made for the harbour server. ",
        first_mes="The lamp is lit.",
        alternate_greetings=("The fog is thick.", "Ships tonight."),
        character_version="2.1",
        depth_prompt=DepthPrompt(prompt="Hums.", depth=2),
    )
    node = make_node(
        "rules",
        content="[{{charPrompt}}|{{charInstruction}}|{{creatorNotes}}|{{greeting}}|{{greeting::2}}"
        "|{{greeting::5}}|{{charVersion}}|{{charDepthPrompt}}]",
    )
    result = assemble(doc(), preset=build_preset([node, marker("chatHistory")]), card=card, seed=1)
    assert (
        "[Keep the lamp.|Answer in one line.|Made for the harbour server.|The lamp is lit.|Ships tonight."
        "||2.1|Hums.]"
    ) in [m.content for m in result.messages]


def test_without_a_card_nothing_changes():
    plain = assemble(doc(), preset=preset(), seed=1)
    assert all(s.kind != "card" for m in plain.messages for s in m.sources)
    assert any("Preset main text." in m.content for m in plain.messages)


def test_a_preset_depth_node_and_the_card_depth_prompt_both_land():
    with_depth = build_preset(
        [make_node("main", content="Main."), marker("chatHistory"), depth("d", "Node at one.", 1)]
    )
    result = assemble(doc(), preset=with_depth, card=CARD, style="standalone", seed=1)
    contents = [m.content for m in result.messages]
    assert "Node at one." in contents and "Mira hums an old tune." in contents
