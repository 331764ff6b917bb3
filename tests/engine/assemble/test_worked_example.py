"""The seed's worked example (st-preset-system.txt, "Context Assembly Override"): the same blocks,
rearranged by the example preset's node order, come out in the documented order."""

from __future__ import annotations

from engine import assemble
from tests.engine.factories import build_preset, depth, make_node, marker

EXAMPLE_PRESET = [
    marker("main"),
    make_node("creative", content="You are a creative writing assistant. Always use vivid language."),
    marker("charDescription"),
    marker("charPersonality"),
    make_node("style-var", content="{{setvar::style::narrative}}"),
    marker("worldInfoBefore"),
    make_node("style-use", content="Write in {{getvar::style}} style."),
    marker("dialogueExamples"),
    marker("chatHistory"),
    depth("stay", "Remember to stay in character.", 0),
]


def test_the_seeds_worked_example_is_reproduced(sample_doc):
    result = assemble(sample_doc, preset=build_preset(EXAMPLE_PRESET))
    listing = [(m.sources[0].tag or m.sources[0].identifier) for m in result.messages]
    history = ["DIALOGUE_HISTORY"] * len(sample_doc.history)
    assert listing == [
        "SYSTEM_HUMANIZER_RULES",  # 1. [main] -> system prompt
        "SYSTEM_CHANNEL_PROMPT",  #    ... with the channel's append prompt right after it
        "creative",  # 2. custom node
        "SYSTEM_PERSONA_PROMPT",  # 3. [charDescription]
        "SYSTEM_PERSONALITY",  # 4. [charPersonality]
        "KNOWLEDGE_SERVER_INFO",  #    FLUSH: server-only blocks after the last anchor
        "KNOWLEDGE_SERVER_MEMORIES",
        "KNOWLEDGE_SERVER_EMOJIS",
        "KNOWLEDGE_SERVER_STICKERS",
        # 5. the setvar node renders nothing
        "KNOWLEDGE_SERVER_DOCUMENTS",  # 6. [worldInfoBefore]
        "style-use",  # 7. "Write in narrative style."
        "KNOWLEDGE_USERS_IN_CONVERSATION",  #  PRE-FLUSH before [dialogueExamples]
        "KNOWLEDGE_SERVER_CONDITIONING",  #  (the default sample has no STM)
        # 8. [dialogueExamples], as SillyTavern sends them (docs/assembly.md#what-sillytavern-118-corrected):
        # per dialogue the preset's
        #    separator (a preset setting, no tag), then one named message per turn
        *(["", "DIALOGUE_SAMPLE", "DIALOGUE_SAMPLE"] * 2),
        *history,  # 9. [chatHistory]
    ]
    contents = [m.content for m in result.messages]
    assert "Write in narrative style." in contents
    assert "style-var" not in listing
    # The sample's history carries a {{setvar}} typed by a user: history is never evaluated.
    assert any("{{setvar::clue_count::1}}" in c for c in contents)
    assert contents[-1] == "Mira: Is it... a secret?\n[System: Remember to stay in character.]"
    assert result.variables == {"style": "narrative"}
