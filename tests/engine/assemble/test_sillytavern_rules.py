"""docs/assembly.md#what-sillytavern-118-corrected: the rules where SillyTavern 1.18 corrected our own, one
test each, on hand-made presets.

Each expectation is what SillyTavern 1.18 sends for the same preset, card and chat (seen through the
differential harness, docs/fidelity.md), less the deliberate differences of
docs/fidelity.md#the-deliberate-differences.
"""

from __future__ import annotations

from engine import assemble, parse_buckets
from engine.cards import Card, DepthPrompt
from tests.engine.factories import build_preset, depth, make_node, marker
from tests.present import present

HISTORY = [
    {"role": "user", "name": "Ann", "content": "Hello."},
    {"role": "assistant", "name": "Tess", "content": "Evening."},
    {"role": "user", "name": "Ann Lee", "content": "Any news?"},
]


def doc(**fields):
    return parse_buckets({"names": {"user": "Ann", "char": "Tess"}, "history": HISTORY, "seed": 3, **fields})


def sent(result) -> list[tuple[str, str, str]]:
    return [(m.role, m.name, m.content) for m in result.messages]


def test_new_chat_prompt_is_a_system_message_right_before_the_history():
    preset = build_preset(
        [make_node("main", content="MAIN"), marker("dialogueExamples"), marker("chatHistory")],
        settings={"new_chat_prompt": "[Start with {{char}}]"},
    )
    result = assemble(doc(sample_dialogues=[{"user": "hi", "char": "yo"}]), preset=preset)
    texts = [m.content for m in result.messages]
    at = texts.index("[Start with Tess]")
    assert texts[at - 1] == "yo" and result.messages[at + 1].history  # after the samples, before the chat


def test_new_chat_prompt_is_not_sent_when_it_renders_empty_or_chat_history_is_off():
    nodes = [make_node("main", content="MAIN"), marker("chatHistory")]
    empty = assemble(doc(), preset=build_preset(nodes, settings={"new_chat_prompt": "{{trim}}"}))
    assert [m.content for m in empty.messages][:2] == ["MAIN", "Ann: Hello."]
    off = build_preset(
        [nodes[0], marker("chatHistory", enabled=False)], settings={"new_chat_prompt": "[New]"}
    )
    assert "[New]" not in [m.content for m in assemble(doc(), preset=off).messages]


def test_squash_runs_on_the_final_list_so_an_injected_system_message_joins_its_neighbour():
    preset = build_preset(
        [
            make_node("main", content="MAIN"),
            marker("chatHistory"),
            depth("note", "NOTE", 0),
            make_node("post", content="POST"),
        ],
        settings={"squash_system_messages": True},
    )
    result = assemble(doc(), preset=preset, style="standalone")
    assert sent(result)[-1] == ("system", "", "NOTE\nPOST")


def test_squash_keeps_the_separators_and_named_turns_apart():
    preset = build_preset(
        [make_node("main", content="MAIN"), marker("dialogueExamples"), marker("chatHistory")],
        settings={"squash_system_messages": True, "new_chat_prompt": "[New chat]"},
    )
    result = assemble(doc(sample_dialogues=[{"user": "hi", "char": "yo"}]), preset=preset)
    assert sent(result)[:5] == [
        ("system", "", "MAIN"),
        ("system", "", "[Example Chat]"),
        ("system", "example_user", "hi"),
        ("system", "example_assistant", "yo"),
        ("system", "", "[New chat]"),
    ]


def test_macros_in_format_settings_are_rendered():
    preset = build_preset(
        [marker("charPersonality"), marker("chatHistory")],
        settings={"personality_format": "{{personality}}{{trim}}", "new_example_chat_prompt": "{{trim}}"},
    )
    result = assemble(doc(personality=["calm\n\n"]), preset=preset)  # {{trim}} takes the newlines around it
    assert result.messages[0].content == "calm"
    assert "{{trim}}" not in "".join(m.content for m in result.messages)


def test_a_format_without_its_placeholder_replaces_the_block_as_sillytavern_does():
    preset = build_preset(
        [marker("charPersonality"), marker("chatHistory")],
        settings={"personality_format": "[{{char}} is kind]"},
    )
    assert assemble(doc(personality=["calm"]), preset=preset).messages[0].content == "[Tess is kind]"


def test_a_cards_system_prompt_replaces_a_main_node_that_holds_only_comments():
    card = Card(
        spec="chara_card_v2", name="Tess", system_prompt="Card main.", post_history_instructions="Card PHI."
    )
    preset = build_preset(
        [
            make_node("main", content="{{// Empty for card override. }}{{trim}}", kind="comment"),
            marker("chatHistory"),
            make_node("jailbreak", content="{{// also empty }}", kind="comment"),
        ]
    )
    texts = [m.content for m in assemble(doc(), preset=preset, card=card).messages]
    assert texts[0] == "Card main." and texts[-1] == "Card PHI."


def test_card_fields_are_trimmed_rendered_with_every_macro_and_lose_carriage_returns():
    card = Card(
        spec="chara_card_v2",
        name="Tess",
        description="  {{setvar::shop::a bakery}}Tess keeps a shop.\r\nShe counts {{roll::1d1}} coin.\r\n",
        scenario="A rainy day at {{getvar::shop}}.",
    )
    preset = build_preset(
        [
            marker("charDescription"),
            marker("scenario"),
            make_node("s", content="Now: {{scenario}}"),
            marker("chatHistory"),
        ]
    )
    texts = [m.content for m in assemble(doc(), preset=preset, card=card).messages]
    assert texts[:3] == [
        "Tess keeps a shop.\nShe counts 1 coin.",
        "A rainy day at a bakery.",
        "Now: A rainy day at a bakery.",
    ]


def test_a_marker_sends_its_block_in_the_role_the_preset_gives_it():
    # vcrp-engine gives charDescription, charPersonality, scenario and the World Info markers the
    # user role; SillyTavern 1.18 sends those blocks as user messages (corpus-vcrp-engine)
    card = Card(spec="chara_card_v2", name="Tess", description="Tess keeps a shop.", personality="Wry.")
    preset = build_preset(
        [
            make_node("main", content="MAIN"),
            marker("charDescription", role="user"),
            marker("charPersonality", role="assistant"),
            marker("chatHistory"),
        ]
    )
    messages = sent(assemble(doc(), preset=preset, card=card))
    assert messages[:3] == [
        ("system", "", "MAIN"),
        ("user", "", "Tess keeps a shop."),
        ("assistant", "", "Wry."),
    ]


def test_mes_examples_raw_is_the_cards_text_as_written():
    # SillyTavern 1.18's {{mesExamplesRaw}} is the card's field, without the <START> {{mesExamples}} adds
    # (corpus-marinara-friendship-ended)
    card = Card(spec="chara_card_v2", name="Tess", mes_example="{{user}}: Hi.\n{{char}}: Evening.")
    preset = build_preset(
        [
            make_node("raw", content="[{{mesExamplesRaw}}]"),
            make_node("ex", content="[{{mesExamples}}]"),
            marker("chatHistory"),
        ]
    )
    texts = [m.content for m in assemble(doc(), preset=preset, card=card).messages]
    assert texts[:2] == ["[Ann: Hi.\nTess: Evening.]", "[<START>\nAnn: Hi.\nTess: Evening.\n]"]


def test_angle_identity_forms_are_read_in_any_case():
    preset = build_preset([make_node("main", content="<user> and <Bot> and <CHAR>"), marker("chatHistory")])
    assert assemble(doc(), preset=preset).messages[0].content == "Ann and Tess and Tess"


def test_names_in_the_name_field_when_the_preset_says_so():
    preset = build_preset([marker("chatHistory")], settings={"names_behavior": 1})
    history = [(m.role, m.name, m.content) for m in assemble(doc(), preset=preset).messages if m.history]
    assert history == [
        ("user", "Ann", "Hello."),
        ("assistant", "Tess", "Evening."),
        ("user", "Ann_Lee", "Any news?"),
    ]


def test_names_in_every_messages_content_when_the_preset_says_so():
    preset = build_preset([marker("chatHistory")], settings={"names_behavior": 2})
    history = [m.content for m in assemble(doc(), preset=preset).messages if m.history]
    assert history == ["Ann: Hello.", "Tess: Evening.", "Ann Lee: Any news?"]


def test_by_default_user_messages_carry_the_speaker_in_the_content_and_replies_do_not():
    # docs/fidelity.md#the-deliberate-differences, item 1: a Discord channel has many speakers, so user names
    # are always sent
    for behavior in (-1, 0):
        preset = build_preset([marker("chatHistory")], settings={"names_behavior": behavior})
        history = [(m.name, m.content) for m in assemble(doc(), preset=preset).messages if m.history]
        assert history == [("", "Ann: Hello."), ("", "Evening."), ("", "Ann Lee: Any news?")]


def test_the_openai_body_carries_names_and_other_providers_get_them_in_the_text():
    preset = build_preset([marker("dialogueExamples"), marker("chatHistory")], settings={"names_behavior": 1})
    samples = {"sample_dialogues": [{"user": "hi", "char": "yo"}]}
    openai = present(assemble(doc(**samples), preset=preset, provider="openai").provider_payload)["messages"]
    assert {"role": "system", "content": "hi", "name": "example_user"} in openai
    assert {"role": "user", "content": "Hello.", "name": "Ann"} in openai
    anthropic = present(assemble(doc(**samples), preset=preset, provider="anthropic").provider_payload)
    assert "Ann: hi" in anthropic["system"] and "Tess: yo" in anthropic["system"]


def test_the_cards_depth_prompt_follows_the_presets_injection_at_the_same_depth():
    preset = build_preset([marker("chatHistory"), depth("d", "  PRESET AT 1 \n", 1)])
    card = Card(spec="chara_card_v2", name="Tess", depth_prompt=DepthPrompt("CARD AT 1", depth=1))
    result = assemble(doc(), preset=preset, card=card, style="standalone")
    assert sent(result)[-2] == ("system", "", "PRESET AT 1\nCARD AT 1")


def test_each_deliberate_difference_that_applies_is_named():
    preset = build_preset(
        [
            make_node("main", content="{{setvar::a::1|2}}{{roll::1d6}}"),
            marker("chatHistory"),
            depth("d", "D", 1),
        ]
    )
    history = [
        {"role": "user", "name": "Ann", "content": "hi {{char}}"},
        {"role": "assistant", "content": " "},
    ]
    said = " ".join(assemble(doc(history=history), preset=preset).differences)
    assert "without it" in said  # docs/fidelity.md#the-deliberate-differences, item 1: user names in the text
    assert "Macros in chat messages are sent as written" in said  # item 2
    assert "merge style" in said  # item 3
    assert "only whitespace" in said  # item 4
    assert "{{setvar::a::1|2}}" in said  # item 6
    assert "seeded source" in said  # item 9


def test_nothing_is_named_where_the_assembly_matches_sillytavern_or_without_a_preset():
    preset = build_preset(
        [make_node("main", content="MAIN"), marker("chatHistory")], settings={"names_behavior": 1}
    )
    assert assemble(doc(), preset=preset, style="standalone").differences == ()
    assert assemble(doc()).differences == ()


def test_a_continued_message_still_counts_for_the_depth_of_injections():
    # SillyTavern 1.18 places @depth prompts with the message being continued still in the chat,
    # then moves that message to the end (the fidelity case group-continue).
    preset = build_preset(
        [make_node("main", content="MAIN"), marker("chatHistory"), depth("note", "NOTE", 1)]
    )
    history = [*HISTORY, {"role": "assistant", "name": "Tess", "content": "The lamp is"}]
    result = assemble(doc(history=history, generation_type="continue"), preset=preset, style="standalone")
    texts = [m.content for m in result.messages]
    assert texts.index("NOTE") == texts.index("Ann Lee: Any news?") + 1
    assert texts[-2] == "The lamp is"
