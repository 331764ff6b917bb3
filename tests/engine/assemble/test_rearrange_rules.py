"""One test per rule of docs/assembly.md#order-of-work (build, then rearrange), with small hand-made
presets."""

from __future__ import annotations

from engine import SAMPLE_NOTE, assemble, parse_buckets
from tests.engine.factories import build_preset, depth, make_node, marker

SMALL = {
    "names": {"user": "Mira", "char": "Tomori"},
    "system_prompt": "SYSTEM by {{char}}",
    "channel_prompt": {"mode": "append", "text": "CHANNEL"},
    "persona_prompt": "PERSONA",
    "personality": ["calm", "wry"],
    "server_info": "INFO",
    "server_memories": ["MEMORY"],
    "emojis": ["EMOJI"],
    "stickers": ["STICKER"],
    "users_in_conversation": "USERS",
    "documents": ["DOC"],
    "conditioning": "CONDITIONING",
    "sample_dialogues": [{"user": "hi", "char": "hello"}],
    "short_term_memory": [{"role": "user", "text": "STM"}],
    "history": [
        {"role": "user", "name": "Mira", "content": "first"},
        {"role": "assistant", "name": "Tomori", "content": "second"},
        {"role": "user", "name": "Mira", "content": "third {{char}}"},
    ],
    "seed": 7,
}


def small(**changes):
    return parse_buckets({**SMALL, **changes})


def tags(assembly) -> list[str]:
    """The first source of each message: a native tag, a node identifier or an assembler name."""
    out = []
    for message in assembly.messages:
        source = message.sources[0]
        out.append(source.tag or source.identifier or f"@{source.name}")
    return out


def contents(assembly) -> list[str]:
    return [m.content for m in assembly.messages]


FULL_ORDER = [
    marker("main"),
    marker("charDescription"),
    marker("charPersonality"),
    marker("worldInfoBefore"),
    marker("dialogueExamples"),
    marker("chatHistory"),
]


# The fixed native order (docs/assembly.md#native-order), written out here rather than read from the
# engine's own constant.
SPEC_ORDER_BEFORE_HISTORY = [
    "SYSTEM_HUMANIZER_RULES",
    "SYSTEM_CHANNEL_PROMPT",
    "SYSTEM_PERSONA_PROMPT",
    "SYSTEM_PERSONALITY",
    "KNOWLEDGE_SERVER_INFO",
    "KNOWLEDGE_SERVER_MEMORIES",
    "KNOWLEDGE_SERVER_EMOJIS",
    "KNOWLEDGE_SERVER_STICKERS",
    "KNOWLEDGE_USERS_IN_CONVERSATION",
    "KNOWLEDGE_SHORT_TERM_MEMORY",
    "KNOWLEDGE_SERVER_DOCUMENTS",
    "KNOWLEDGE_SERVER_CONDITIONING",
    "DIALOGUE_SAMPLE",
]


def test_impersonation_uses_native_assembly_even_with_a_preset():
    preset = build_preset([make_node("custom", content="CUSTOM"), marker("chatHistory")])
    result = assemble(small(impersonation=True), preset=preset)
    assert result.mode == "native"
    assert "CUSTOM" not in "".join(contents(result))


def test_without_a_preset_blocks_come_in_the_fixed_native_order():
    result = assemble(small())
    assert tags(result) == [
        *SPEC_ORDER_BEFORE_HISTORY,
        "DIALOGUE_HISTORY",
        "DIALOGUE_HISTORY",
        "DIALOGUE_HISTORY",
    ]


def test_an_unmarked_main_content_node_is_the_system_prompt_slot():
    preset = build_preset(
        [make_node("intro", content="INTRO"), make_node("main", content="MAIN TEXT"), marker("chatHistory")]
    )
    result = assemble(small(), preset=preset)
    assert tags(result)[:4] == ["intro", "SYSTEM_HUMANIZER_RULES", "SYSTEM_CHANNEL_PROMPT", "main"]
    assert contents(result)[1:4] == ["SYSTEM by Tomori", "CHANNEL", "MAIN TEXT"]


def test_a_disabled_main_leaves_the_server_prompt_opening_the_prompt_and_drops_mains_text():
    preset = build_preset(
        [
            make_node("intro", content="INTRO"),
            make_node("main", content="MAIN TEXT", enabled=False),
            marker("chatHistory"),
        ]
    )
    result = assemble(small(), preset=preset)
    assert tags(result)[:3] == ["SYSTEM_HUMANIZER_RULES", "SYSTEM_CHANNEL_PROMPT", "intro"]
    assert "MAIN TEXT" not in "".join(contents(result))


def test_the_built_in_fallback_system_prompt_is_dropped_while_a_preset_is_active_and_says_so():
    preset = build_preset(FULL_ORDER)
    result = assemble(small(system_prompt=None), preset=preset)
    assert "SYSTEM_HUMANIZER_RULES" not in tags(result)
    assert any("fallback" in o.what for o in result.omitted)
    assert "SYSTEM_HUMANIZER_RULES" in tags(assemble(small(system_prompt=None)))


def test_char_description_and_personality_markers_pull_persona_and_personality():
    preset = build_preset(
        [
            marker("charPersonality"),
            make_node("x", content="X"),
            marker("charDescription"),
            marker("chatHistory"),
        ]
    )
    order = tags(assemble(small(), preset=preset))
    assert order.index("SYSTEM_PERSONALITY") < order.index("x") < order.index("SYSTEM_PERSONA_PROMPT")


def test_a_node_expanding_description_keeps_the_description_at_its_marker_as_sillytavern_does():
    preset = build_preset(
        [
            make_node("desc", content="About: {{description}}"),
            marker("charDescription"),
            marker("chatHistory"),
        ]
    )
    result = assemble(small(), preset=preset)
    texts = contents(result)
    # SillyTavern 1.18 sends both (docs/assembly.md#what-sillytavern-118-corrected)
    assert texts.index("About: PERSONA") < texts.index("PERSONA")
    assert not any("{{description}}" in o.reason for o in result.omitted)


def test_a_node_expanding_personality_keeps_the_personality_block_too():
    preset = build_preset(
        [make_node("p", content="Traits: {{personality}}"), marker("charPersonality"), marker("chatHistory")]
    )
    texts = contents(assemble(small(), preset=preset))
    assert texts.index("Traits: calm\nwry") < texts.index("calm\nwry")


def test_a_node_expanding_mes_examples_keeps_the_sample_block_too():
    preset = build_preset(
        [make_node("ex", content="{{mesExamples}}"), marker("dialogueExamples"), marker("chatHistory")]
    )
    result = assemble(small(), preset=preset)
    assert "DIALOGUE_SAMPLE" in tags(result)
    # SillyTavern's {{mesExamples}}: each block opens with <START> and ends with a newline
    assert "<START>\nMira: hi\nTomori: hello\n" in contents(result)


def test_a_node_expanding_summary_drops_the_same_channel_summary_item_only():
    stm = [
        {"role": "user", "text": "OTHER CHANNEL"},
        {"role": "system", "text": "HERE", "same_channel": True},
    ]
    preset = build_preset([make_node("s", content="Summary: {{summary}}"), marker("chatHistory")])
    result = assemble(small(short_term_memory=stm), preset=preset)
    texts = contents(result)
    assert "Summary: HERE" in texts and "HERE" not in texts and "OTHER CHANNEL" in texts


def test_the_first_world_info_marker_takes_every_document():
    preset = build_preset(
        [
            marker("worldInfoAfter"),
            make_node("x", content="X"),
            marker("worldInfoBefore"),
            marker("chatHistory"),
        ]
    )
    order = tags(assemble(small(documents=["A", "B"]), preset=preset))
    assert order.index("KNOWLEDGE_SERVER_DOCUMENTS") < order.index("x")
    assert order.count("KNOWLEDGE_SERVER_DOCUMENTS") == 1


def test_documents_are_omitted_only_when_every_world_info_marker_is_disabled():
    off = build_preset(
        [
            marker("worldInfoBefore", enabled=False),
            marker("worldInfoAfter", enabled=False),
            marker("chatHistory"),
        ]
    )
    result = assemble(small(), preset=off)
    assert "KNOWLEDGE_SERVER_DOCUMENTS" not in tags(result)
    assert any("disabled by the preset" in o.reason for o in result.omitted)
    one_on = build_preset(
        [marker("worldInfoBefore", enabled=False), marker("worldInfoAfter"), marker("chatHistory")]
    )
    assert "KNOWLEDGE_SERVER_DOCUMENTS" in tags(assemble(small(), preset=one_on))


def test_documents_no_world_info_marker_takes_go_with_the_blocks_right_before_the_history():
    preset = build_preset([marker("main"), marker("dialogueExamples"), marker("chatHistory")])
    order = tags(assemble(small(), preset=preset))
    at = order.index("@new_example_chat_prompt")  # the sample dialogue opens with its separator
    assert order[at - 4 : at] == [
        "KNOWLEDGE_USERS_IN_CONVERSATION",
        "KNOWLEDGE_SHORT_TERM_MEMORY",
        "KNOWLEDGE_SERVER_DOCUMENTS",
        "KNOWLEDGE_SERVER_CONDITIONING",
    ]


def test_the_persona_description_marker_sends_the_users_persona_as_written():
    preset = build_preset([marker("main"), marker("personaDescription"), marker("chatHistory")])
    result = assemble(small(user_persona="Mira is a {{char}} fan.", sample_dialogues=[]), preset=preset)
    texts = contents(result)
    # end-user text: no macro runs in it (docs/fidelity.md#the-deliberate-differences)
    at = texts.index("Mira is a {{char}} fan.")
    assert tags(result)[at] == "USER_PERSONA"
    assert tags(result)[at - 1] != "DIALOGUE_HISTORY"  # at its marker, before the history


def test_a_disabled_persona_description_marker_leaves_the_persona_out_and_says_so():
    preset = build_preset([marker("personaDescription", enabled=False), marker("chatHistory")])
    result = assemble(small(user_persona="Mira likes tea."), preset=preset)
    assert "Mira likes tea." not in contents(result)
    assert any("persona description" in o.what for o in result.omitted)


def test_without_any_persona_description_marker_the_persona_comes_last_as_in_sillytavern():
    preset = build_preset(
        [
            marker("charDescription"),
            marker("charPersonality"),
            marker("chatHistory"),
            make_node("post", content="POST"),
        ]
    )
    assert contents(assemble(small(user_persona="Mira likes tea."), preset=preset))[-2:] == [
        "POST",
        "Mira likes tea.",
    ]


def test_card_blocks_without_a_marker_in_the_order_follow_every_node_in_sillytaverns_order():
    # SillyTavern 1.18 appends the description, personality and persona it has no marker for after the
    # last prompt of the order, whatever that is (docs/assembly.md#what-sillytavern-118-corrected); the
    # server's own blocks stay before the history.
    preset = build_preset(
        [make_node("a", content="A"), marker("chatHistory"), make_node("post", content="POST")]
    )
    order = tags(assemble(small(user_persona="Mira likes tea."), preset=preset))
    assert order[-4:] == ["post", "SYSTEM_PERSONA_PROMPT", "SYSTEM_PERSONALITY", "USER_PERSONA"]


def test_scenario_and_persona_description_markers_emit_nothing_silently():
    preset = build_preset([marker("scenario"), marker("personaDescription"), marker("chatHistory")])
    result = assemble(small(), preset=preset)
    assert result.warnings == ()
    assert len(result.messages) == len(
        assemble(small(), preset=build_preset([marker("chatHistory")])).messages
    )


def test_a_content_node_becomes_an_item_with_its_role_and_an_empty_one_emits_nothing():
    preset = build_preset(
        [
            make_node("u", content="AS USER", role="user"),
            make_node("empty", content="{{setvar::a::1}}"),
            marker("chatHistory"),
        ]
    )
    result = assemble(small(), preset=preset)
    message = next(m for m in result.messages if m.content == "AS USER")
    assert message.role == "user"
    assert "empty" not in tags(result)


def test_a_disabled_marker_omits_its_block_and_names_it():
    preset = build_preset([marker("main"), marker("charDescription", enabled=False), marker("chatHistory")])
    result = assemble(small(), preset=preset)
    assert "SYSTEM_PERSONA_PROMPT" not in tags(result)
    assert any(o.reason == "omitted: charDescription disabled by the preset." for o in result.omitted)


def test_a_disabled_dialogue_examples_marker_omits_the_samples_and_says_so():
    preset = build_preset([marker("dialogueExamples", enabled=False), marker("chatHistory")])
    result = assemble(small(), preset=preset)
    assert "DIALOGUE_SAMPLE" not in tags(result)
    assert any("dialogueExamples disabled" in o.reason for o in result.omitted)


def test_a_disabled_chat_history_marker_sends_no_conversation_as_sillytavern_does():
    # SillyTavern 1.18 (fidelity case own-history-disabled): no chat, nothing placed inside it, and what
    # the preset puts after the marker still follows.
    preset = build_preset(
        [
            marker("main"),
            depth("reminder", "Keep the lamp lit.", 1),
            marker("chatHistory", enabled=False),
            make_node("after", content="AFTER", role="user"),
        ]
    )
    result = assemble(small(), preset=preset)
    order = tags(result)
    assert "DIALOGUE_HISTORY" not in order
    assert "reminder" not in order
    assert order.index("after") > order.index("SYSTEM_CHANNEL_PROMPT")  # what follows the marker is sent
    assert any("switch its Chat History node on" in w for w in result.warnings)
    assert any(o.what == "The conversation (3 messages)." for o in result.omitted)
    assert any("at depth 1" in o.what and "chatHistory" in o.reason for o in result.omitted)


def test_server_only_blocks_follow_the_last_character_anchor_before_the_history():
    preset = build_preset(
        [
            marker("main"),
            make_node("a", content="A"),
            marker("charPersonality"),
            make_node("b", content="B"),
            marker("chatHistory"),
        ]
    )
    order = tags(assemble(small(), preset=preset))
    at = order.index("SYSTEM_PERSONALITY")
    assert order[at + 1 : at + 5] == [
        "KNOWLEDGE_SERVER_INFO",
        "KNOWLEDGE_SERVER_MEMORIES",
        "KNOWLEDGE_SERVER_EMOJIS",
        "KNOWLEDGE_SERVER_STICKERS",
    ]
    assert order[at + 5] == "b"


def test_without_an_anchor_server_only_blocks_are_leftovers_before_the_history():
    preset = build_preset(
        [make_node("a", content="A"), marker("chatHistory"), make_node("post", content="POST")]
    )
    order = tags(assemble(small(), preset=preset))
    assert order.index("a") < order.index("KNOWLEDGE_SERVER_INFO") < order.index("DIALOGUE_HISTORY")


def test_users_memory_and_conditioning_come_right_before_the_first_dialogue_examples_marker():
    nodes = [
        marker("main"),
        marker("worldInfoBefore"),
        make_node("a", content="A"),
        marker("dialogueExamples"),
        make_node("b", content="B"),
        marker("chatHistory"),
    ]
    order = tags(assemble(small(), preset=build_preset(nodes)))
    at = order.index("@new_example_chat_prompt")  # the sample dialogue: separator, user turn, reply
    assert order[at - 4 : at] == [
        "a",
        "KNOWLEDGE_USERS_IN_CONVERSATION",
        "KNOWLEDGE_SHORT_TERM_MEMORY",
        "KNOWLEDGE_SERVER_CONDITIONING",
    ]
    assert order[at + 1 : at + 4] == ["DIALOGUE_SAMPLE", "DIALOGUE_SAMPLE", "b"]


def test_leftovers_come_before_the_history_in_native_order_and_never_after_it():
    preset = build_preset(
        [
            make_node("a", content="A"),
            marker("charDescription"),
            marker("charPersonality"),
            marker("chatHistory"),
            make_node("post", content="POST"),
        ]
    )
    order = tags(assemble(small(), preset=preset))
    first_history = order.index("DIALOGUE_HISTORY")
    before = list(dict.fromkeys(t for t in order[:first_history] if t.isupper()))
    # no dialogueExamples in the order: SillyTavern 1.18 sends no sample dialogues (own-examples-absent)
    assert before == [tag for tag in SPEC_ORDER_BEFORE_HISTORY if tag != "DIALOGUE_SAMPLE"]
    assert order[first_history + 3 :] == ["post"]


def test_what_the_preset_places_after_chat_history_stays_after_it():
    preset = build_preset([marker("main"), marker("chatHistory"), marker("dialogueExamples")])
    result = assemble(small(), preset=preset)
    order = tags(result)
    assert order.index("DIALOGUE_SAMPLE") > max(i for i, t in enumerate(order) if t == "DIALOGUE_HISTORY")


def test_a_preset_without_chat_history_ends_with_the_leftovers_and_sends_no_conversation():
    # SillyTavern 1.18 (fidelity case own-history-absent) sends no chat when the order has no chatHistory.
    preset = build_preset([make_node("a", content="A"), make_node("b", content="B")])
    result = assemble(small(), preset=preset)
    order = tags(result)
    assert "DIALOGUE_HISTORY" not in order
    assert any("no chatHistory marker" in w for w in result.warnings)
    assert order[:4] == ["SYSTEM_HUMANIZER_RULES", "SYSTEM_CHANNEL_PROMPT", "a", "b"]
    assert order[4:] == [
        "SYSTEM_PERSONA_PROMPT",
        "SYSTEM_PERSONALITY",
        "KNOWLEDGE_SERVER_INFO",
        "KNOWLEDGE_SERVER_MEMORIES",
        "KNOWLEDGE_SERVER_EMOJIS",
        "KNOWLEDGE_SERVER_STICKERS",
        "KNOWLEDGE_USERS_IN_CONVERSATION",
        "KNOWLEDGE_SHORT_TERM_MEMORY",
        "KNOWLEDGE_SERVER_DOCUMENTS",
        "KNOWLEDGE_SERVER_CONDITIONING",
    ]  # no dialogueExamples in the order: no sample dialogues (SillyTavern 1.18, own-examples-absent)


def test_a_sample_dialogue_at_the_very_end_gets_the_reference_only_note():
    preset = build_preset(
        [
            marker("main"),
            marker("charDescription"),
            marker("charPersonality"),
            marker("chatHistory"),
            marker("dialogueExamples"),
        ]
    )
    result = assemble(small(), preset=preset)
    last = result.messages[-1]
    assert last.role == "user" and last.content == SAMPLE_NOTE
    assert last.sources[0].to_dict() == {"kind": "assembler", "name": "sample_note"}


def test_identity_macros_are_resolved_in_preset_and_server_text_but_never_in_history_or_memory():
    preset = build_preset(
        [make_node("who", content="I am {{char}}, talking to {{user}} <USER>."), marker("chatHistory")]
    )
    doc = small(
        short_term_memory=[{"role": "user", "text": "STM says {{user}}"}],
        documents=["DOC says {{char}}"],
        server_memories=["MEM {{char}}"],
        users_in_conversation="USERS {{user}}",
    )
    texts = contents(assemble(doc, preset=preset))
    assert "I am Tomori, talking to Mira Mira." in texts
    assert "SYSTEM by Tomori" in texts
    assert "Mira: third {{char}}" in texts
    assert "STM says {{user}}" in texts and "USERS {{user}}" in texts
    assert any("DOC says {{char}}" in t for t in texts) and any("MEM {{char}}" in t for t in texts)


def test_user_history_items_are_sent_with_the_speakers_name_and_assistant_items_as_they_are():
    texts = contents(assemble(small()))
    assert texts[-3:] == ["Mira: first", "second", "Mira: third {{char}}"]


def test_personality_format_and_wi_format_wrap_their_blocks():
    preset = build_preset(
        [marker("charPersonality"), marker("worldInfoBefore"), marker("chatHistory")],
        settings={"personality_format": "[Traits: {{personality}}]", "wi_format": "<lore>{0}</lore>"},
    )
    texts = contents(assemble(small(), preset=preset))
    assert "[Traits: calm\nwry]" in texts
    assert "<lore>DOC</lore>" in texts


def test_new_example_chat_prompt_separates_each_sample_dialogue():
    preset = build_preset(
        [marker("dialogueExamples"), marker("chatHistory")], settings={"new_example_chat_prompt": "[Example]"}
    )
    samples = [{"user": "a", "char": "b"}, {"user": "c", "char": "d"}]
    result = assemble(small(sample_dialogues=samples), preset=preset)
    sent = [(m.role, m.name, m.content) for m in result.messages if m.tag == "DIALOGUE_SAMPLE"]
    # SillyTavern: per dialogue the separator, then one system message per turn, named, prefix removed
    assert sent == [
        ("system", "", "[Example]"),
        ("system", "example_user", "a"),
        ("system", "example_assistant", "b"),
        ("system", "", "[Example]"),
        ("system", "example_user", "c"),
        ("system", "example_assistant", "d"),
    ]


def test_a_separator_that_renders_empty_sends_only_the_turns():
    preset = build_preset(
        [marker("dialogueExamples"), marker("chatHistory")], settings={"new_example_chat_prompt": "{{trim}}"}
    )
    result = assemble(small(), preset=preset)
    sent = [(m.name, m.content) for m in result.messages if m.tag == "DIALOGUE_SAMPLE"]
    assert sent == [("example_user", "hi"), ("example_assistant", "hello")]


def test_squash_system_messages_merges_consecutive_system_items_but_not_across_the_history():
    nodes = [
        marker("main"),
        marker("charDescription"),
        marker("charPersonality"),
        make_node("a", content="A"),
        make_node("b", content="B"),
        marker("chatHistory"),
        make_node("p1", content="P1"),
        make_node("p2", content="P2"),
    ]
    result = assemble(
        small(sample_dialogues=[], short_term_memory=[]),
        preset=build_preset(nodes, settings={"squash_system_messages": True}),
    )
    roles = [m.role for m in result.messages]
    assert roles == ["system", "user", "assistant", "user", "system"]
    assert result.messages[0].content.startswith("SYSTEM by Tomori\nCHANNEL\nPERSONA\ncalm\nwry\nINFO")
    assert "\nA\nB\n" in result.messages[0].content
    assert result.messages[-1].content == "P1\nP2"


def test_an_unrecognised_marker_is_skipped_with_a_warning():
    preset = build_preset([marker("mysteryBox"), marker("chatHistory")])
    result = assemble(small(), preset=preset)
    assert any("mysteryBox" in w for w in result.warnings)


def test_a_node_whose_trigger_excludes_normal_generations_is_skipped_and_the_reason_shown():
    preset = build_preset(
        [make_node("imp", content="IMPERSONATE", injection_trigger=("impersonate",)), marker("chatHistory")]
    )
    result = assemble(small(), preset=preset)
    assert "IMPERSONATE" not in "".join(contents(result))
    assert any("impersonate" in o.reason for o in result.omitted)


def test_legacy_marker_prefix_and_suffix_appear_only_around_a_non_empty_block():
    preset = build_preset(
        [marker("charPersonality", prefix="{{char}}'s traits: ", suffix=" (end)"), marker("chatHistory")]
    )
    assert "Tomori's traits: calm\nwry (end)" in contents(assemble(small(), preset=preset))
    empty = contents(assemble(small(personality=[]), preset=preset))
    assert not any("traits" in t for t in empty)


def test_variables_are_written_in_node_order_and_reported():
    preset = build_preset(
        [
            make_node("w", content="{{setvar::mood::sunny}}"),
            make_node("r", content="Mood {{getvar::mood}}"),
            marker("chatHistory"),
        ]
    )
    result = assemble(small(), preset=preset)
    assert "Mood sunny" in contents(result)
    assert result.variables["mood"] == "sunny"


def test_every_part_knows_its_source():
    preset = build_preset(
        [
            marker("main"),
            make_node("n1", content="N1", name="Node one"),
            marker("dialogueExamples"),
            marker("chatHistory"),
            depth("d", "DEPTH", 0),
        ]
    )
    result = assemble(small(tail_directives=["TAIL"]), preset=preset)
    kinds = {s.kind for m in result.messages for s in m.sources}
    assert kinds == {"native", "node", "assembler", "preset_setting"}  # the sample separator
    assert {"kind": "node", "identifier": "n1", "name": "Node one"} in [
        s.to_dict() for m in result.messages for s in m.sources
    ]


def test_an_empty_assistant_node_ends_a_squashed_run_and_is_not_sent():
    # SillyTavern 1.18 keeps an empty user/assistant prompt through its squash (so it separates the
    # system prompts around it) and our harness sees it send nothing there
    # (docs/fidelity.md#the-deliberate-differences, item 4)
    nodes = [
        make_node("a", content="A"),
        make_node("sever", content="", role="assistant"),
        make_node("b", content="B"),
        marker("chatHistory"),
    ]
    result = assemble(
        small(sample_dialogues=[], short_term_memory=[]),
        preset=build_preset(nodes, settings={"squash_system_messages": True}),
    )
    texts = contents(result)
    assert texts[0].endswith("\nA") and texts[1].startswith("B\n")  # two system messages, not one
    assert all(text.strip() for text in texts)
