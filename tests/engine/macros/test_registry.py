"""Issue 34: SillyTavern 1.18's macro registry, as it rendered each macro for a chat's first generation
(fidelity cases own-macros-registry, own-macros-instruct and own-macros-continue, docs/macros.md)."""

from __future__ import annotations

import pytest

from engine import assemble, parse_buckets
from engine.macros import MacroEnv, find_unsupported_macros
from tests.engine.factories import build_preset, make_node, marker

from .conftest import render

REQUEST = MacroEnv(model="fidelity-model", max_context=2_000_000, max_response=300, history_count=5)


@pytest.mark.parametrize(
    ("macro", "printed"),
    [
        ("model", "fidelity-model"),
        ("maxPrompt", "1999700"),
        ("maxPromptTokens", "1999700"),
        ("maxContext", "2000000"),
        ("maxContextTokens", "2000000"),
        ("maxResponse", "300"),
        ("maxResponseTokens", "300"),
        ("isMobile", "false"),
        ("input", ""),
        ("lastMessageId", "4"),
        ("firstIncludedMessageId", ""),
        ("firstDisplayedMessageId", "0"),
        ("lastSwipeId", ""),
        ("currentSwipeId", ""),
        ("allChatRange", "0-4"),
        ("lastGenerationType", "normal"),
        ("instructUserPrefix", ""),
        ("instructInput", ""),
        ("instructSystemSuffix", ""),
        ("exampleSeparator", "***"),
        ("chatSeparator", "***"),
        ("chatStart", "***"),
        ("hasExtension::regex", "true"),
        ("hasExtension::memory", "false"),
        ("timeDiff::2026-01-01::2026-01-03", "2 days ago"),
        ("timeDiff::2026-01-01 12:00::2026-01-01 11:00", "in an hour"),
        ('banned::"storm"', ""),
        ("setvar::q::1}}{{varexists::q", "true"),
        ("setvar::q::1}}{{flushvar::q}}{{hasvar::q", "false"),
    ],
)
def test_the_registry_macros_render_as_sillytavern_rendered_them(macro: str, printed: str) -> None:
    assert render(f"[{{{{{macro}}}}}]", env=REQUEST).text == f"[{printed}]"


def test_the_default_system_prompt_is_printed_as_written_with_its_own_macros_left_in() -> None:
    preset = build_preset(
        [make_node("main", content="[{{systemPrompt}}] [{{instructSystemPrompt}}]"), marker("chatHistory")]
    )
    doc = parse_buckets(
        {"names": {"user": "Ann", "char": "Tess"}, "history": [{"role": "user", "content": "hi"}]}
    )
    sent = assemble(doc, preset=preset, count_tokens=False).messages[0].content
    default = "Write {{char}}'s next reply in a fictional chat between {{char}} and {{user}}."
    assert sent == f"[{default}] [{default}]"


def test_not_char_is_the_user_and_group_not_muted_the_character_outside_a_group() -> None:
    preset = build_preset([make_node("main", content="{{notChar}}/{{groupNotMuted}}"), marker("chatHistory")])
    doc = parse_buckets(
        {"names": {"user": "Ann", "char": "Tess"}, "history": [{"role": "user", "content": "hi"}]}
    )
    assert assemble(doc, preset=preset, count_tokens=False).messages[0].content == "Ann/Tess"


def test_the_documents_model_and_budget_reach_the_request_macros() -> None:
    preset = build_preset(
        [make_node("main", content="{{model}} {{maxPrompt}} {{lastMessageId}}"), marker("chatHistory")]
    )
    doc = parse_buckets(
        {
            "names": {"user": "Ann", "char": "Tess"},
            "history": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
            "model": "gpt-test",
            "budget": {"context": 8000, "reply": 500},
        }
    )
    assert assemble(doc, preset=preset, count_tokens=False).messages[0].content == "gpt-test 7500 1"


def test_last_chat_message_is_known_only_in_the_continue_nudge() -> None:
    preset = build_preset(
        [make_node("main", content="Main [{{lastChatMessage}}]"), marker("chatHistory")],
        settings={"continue_nudge_prompt": "[Continue: {{lastChatMessage}}]"},
    )
    doc = parse_buckets(
        {
            "names": {"user": "Ann", "char": "Tess"},
            "history": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Then I will"}],
            "generation_type": "continue",
        }
    )
    texts = [m.content for m in assemble(doc, preset=preset, count_tokens=False).messages]
    assert texts[0] == "Main [{{lastChatMessage}}]"
    assert texts[-1] == "[Continue: Then I will]"


def test_every_macro_of_the_registry_is_known() -> None:
    registry = [
        "lastMessage",
        "lastMessageId",
        "lastUserMessage",
        "lastCharMessage",
        "firstIncludedMessageId",
        "firstDisplayedMessageId",
        "lastSwipeId",
        "currentSwipeId",
        "allChatRange",
        "space",
        "newline",
        "noop",
        "trim",
        "if",
        "else",
        "input",
        "maxPrompt",
        "maxPromptTokens",
        "maxContext",
        "maxContextTokens",
        "maxResponse",
        "maxResponseTokens",
        "reverse",
        "roll",
        "random",
        "pick",
        "banned",
        "outlet",
        "user",
        "char",
        "group",
        "charIfNotGroup",
        "groupNotMuted",
        "notChar",
        "charPrompt",
        "charInstruction",
        "charDescription",
        "description",
        "charPersonality",
        "personality",
        "charScenario",
        "scenario",
        "persona",
        "mesExamplesRaw",
        "mesExamples",
        "charDepthPrompt",
        "charCreatorNotes",
        "creatorNotes",
        "charFirstMessage",
        "greeting",
        "charVersion",
        "version",
        "char_version",
        "model",
        "isMobile",
        "systemPrompt",
        "lastGenerationType",
        "hasExtension",
        "time",
        "date",
        "weekday",
        "isotime",
        "isodate",
        "datetimeformat",
        "idleDuration",
        "idle_duration",
        "timeDiff",
        "setvar",
        "addvar",
        "incvar",
        "decvar",
        "getvar",
        "hasvar",
        "varexists",
        "deletevar",
        "flushvar",
        "setglobalvar",
        "addglobalvar",
        "incglobalvar",
        "decglobalvar",
        "getglobalvar",
        "hasglobalvar",
        "globalvarexists",
        "deleteglobalvar",
        "flushglobalvar",
        "instructStoryStringPrefix",
        "instructStoryStringSuffix",
        "instructUserPrefix",
        "instructInput",
        "instructUserSuffix",
        "instructAssistantPrefix",
        "instructOutput",
        "instructAssistantSuffix",
        "instructSeparator",
        "instructSystemPrefix",
        "instructSystemSuffix",
        "instructFirstAssistantPrefix",
        "instructFirstOutputPrefix",
        "instructLastAssistantPrefix",
        "instructLastOutputPrefix",
        "instructStop",
        "instructUserFiller",
        "instructSystemInstructionPrefix",
        "instructFirstUserPrefix",
        "instructFirstInput",
        "instructLastUserPrefix",
        "instructLastInput",
        "defaultSystemPrompt",
        "instructSystem",
        "instructSystemPrompt",
        "exampleSeparator",
        "chatSeparator",
        "chatStart",
    ]
    assert find_unsupported_macros(" ".join(f"{{{{{name}}}}}" for name in registry)) == frozenset()
