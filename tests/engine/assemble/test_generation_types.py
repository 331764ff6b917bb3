"""docs/assembly.md#generation-types-and-prefill: every kind of turn (normal, continue, impersonate, swipe,
regenerate, quiet) and the Anthropic prefill."""

from __future__ import annotations

from typing import Any

import pytest

from engine import assemble
from engine.buckets import BucketError, parse_buckets
from tests.engine.factories import build_preset, depth, make_node, marker
from tests.present import present

HISTORY = [
    {"role": "user", "name": "Ann", "content": "Where is the lantern?"},
    {"role": "assistant", "name": "Lantern", "content": "On the hook by the door."},
    {"role": "user", "name": "Ann", "content": "Light it, please."},
    {"role": "assistant", "name": "Lantern", "content": "The wick catches and"},
]


def document(**fields: Any):
    data: dict[str, Any] = {"names": {"user": "Ann", "char": "Lantern"}, "system_prompt": "Server rules."}
    data["history"] = fields.pop("history", HISTORY)
    data.update(fields)
    return parse_buckets(data)


def triggered_preset(**settings: Any):
    """One node per trigger, so each generation type shows which of them it keeps."""
    return build_preset(
        [
            make_node("main", content="Main prompt."),
            make_node("always", content="For every turn."),
            make_node("only_normal", content="Normal only.", injection_trigger=("normal",)),
            make_node("only_continue", content="Continue only.", injection_trigger=("continue",)),
            make_node("only_impersonate", content="Impersonate only.", injection_trigger=("impersonate",)),
            make_node(
                "swipe_or_regen", content="Swipe or regenerate.", injection_trigger=("swipe", "regenerate")
            ),
            make_node("only_quiet", content="Quiet only.", injection_trigger=("quiet",)),
            marker("chatHistory"),
            make_node("jailbreak", content="After the history."),
        ],
        settings=settings,
    )


def texts(assembly) -> list[str]:
    return [message.content for message in assembly.messages]


def roles(assembly) -> list[str]:
    return [message.role for message in assembly.messages]


EXPECTED_NODES = {
    "normal": "Normal only.",
    "continue": "Continue only.",
    "impersonate": "Impersonate only.",
    "swipe": "Swipe or regenerate.",
    "regenerate": "Swipe or regenerate.",
    "quiet": "Quiet only.",
}


@pytest.mark.parametrize("kind", list(EXPECTED_NODES))
def test_each_generation_type_keeps_only_the_nodes_its_trigger_allows(kind: str) -> None:
    assembly = assemble(document(generation_type=kind, quiet_prompt="Summarise."), preset=triggered_preset())
    joined = "\n".join(texts(assembly))
    assert "For every turn." in joined
    assert EXPECTED_NODES[kind] in joined
    for other in set(EXPECTED_NODES.values()) - {EXPECTED_NODES[kind]}:
        assert other not in joined
        assert any(f"this is a {kind} generation" in o.reason for o in assembly.omitted)


def test_the_document_defaults_to_a_normal_generation_and_refuses_an_unknown_type() -> None:
    assert document().generation_type == "normal"
    with pytest.raises(BucketError, match="generation_type"):
        document(generation_type="rewrite")


@pytest.mark.parametrize("kind", ["swipe", "regenerate"])
def test_swipe_and_regenerate_drop_the_newest_assistant_message(kind: str) -> None:
    assembly = assemble(document(generation_type=kind), preset=triggered_preset())
    assert "The wick catches and" not in "\n".join(texts(assembly))
    assert "On the hook by the door." in "\n".join(texts(assembly))
    assert any("newest assistant message" in o.what for o in assembly.omitted)


def test_swipe_drops_the_reply_before_the_macros_read_the_history() -> None:
    preset = build_preset(
        [make_node("main", content="Last reply: {{lastCharMessage}}"), marker("chatHistory")]
    )
    assembly = assemble(document(generation_type="swipe"), preset=preset)
    assert "Last reply: On the hook by the door." in texts(assembly)


def test_continue_with_the_nudge_moves_the_continued_message_to_the_end_and_nudges_after_it() -> None:
    preset = triggered_preset(
        continue_nudge_prompt="[Go on from: {{lastChatMessage}}]", continue_prefill=False
    )
    assembly = assemble(document(generation_type="continue"), preset=preset)
    assert texts(assembly)[-2:] == ["The wick catches and", "[Go on from: The wick catches and]"]
    assert roles(assembly)[-2:] == ["assistant", "system"]
    assert texts(assembly).index("After the history.") < len(texts(assembly)) - 2
    nudge = assembly.messages[-1].sources[0].to_dict()
    assert nudge == {"kind": "preset_setting", "name": "continue_nudge_prompt"}


def test_continue_with_prefill_keeps_the_message_last_with_the_prefill_before_it_for_anthropic() -> None:
    preset = triggered_preset(continue_prefill=True, assistant_prefill="Lantern speaks:  ")
    assembly = assemble(document(generation_type="continue"), preset=preset, provider="anthropic")
    assert assembly.messages[-1].role == "assistant"
    assert assembly.messages[-1].content == "Lantern speaks:\n\nThe wick catches and"
    assert not any("[Continue" in text for text in texts(assembly))
    assert present(assembly.provider_payload)["messages"][-1] == {
        "role": "assistant",
        "content": "Lantern speaks:\n\nThe wick catches and",
    }


def test_continue_with_prefill_for_openai_sends_the_message_last_without_a_prefill() -> None:
    preset = triggered_preset(continue_prefill=True, assistant_prefill="Lantern speaks:")
    assembly = assemble(document(generation_type="continue"), preset=preset, provider="openai")
    assert assembly.messages[-1].content == "The wick catches and"
    assert any("Only the Anthropic provider takes a prefill" in o.reason for o in assembly.omitted)


def test_impersonate_appends_the_impersonation_prompt_as_the_final_system_message() -> None:
    preset = triggered_preset(impersonation_prompt="[Write as {{user}} now.]")
    assembly = assemble(document(generation_type="impersonate"), preset=preset)
    assert assembly.mode == "preset"
    assert assembly.messages[-1].role == "system"
    assert assembly.messages[-1].content == "[Write as Ann now.]"


def test_the_impersonation_flag_still_routes_to_native_assembly() -> None:
    assembly = assemble(
        document(impersonation=True, generation_type="impersonate"), preset=triggered_preset()
    )
    assert assembly.mode == "native"


def test_quiet_appends_the_documents_quiet_prompt_last_and_never_prefills() -> None:
    preset = triggered_preset(assistant_prefill="I will answer:")
    doc = document(generation_type="quiet", quiet_prompt="Summarise the scene for {{char}} in one line.")
    assembly = assemble(doc, preset=preset, provider="anthropic")
    assert assembly.messages[-1].role == "system"
    assert assembly.messages[-1].content == "Summarise the scene for Lantern in one line."
    assert "I will answer:" not in "\n".join(texts(assembly))


def test_the_prefill_is_a_final_assistant_message_for_anthropic_and_shown_as_a_preset_setting() -> None:
    preset = triggered_preset(assistant_prefill="{{setvar::mood::calm}}Lantern ({{getvar::mood}}):   ")
    assembly = assemble(document(history=HISTORY[:3]), preset=preset, provider="anthropic")
    last = assembly.messages[-1]
    assert (last.role, last.content) == ("assistant", "Lantern (calm):")
    assert last.sources[0].to_dict() == {"kind": "preset_setting", "name": "assistant_prefill"}
    assert present(assembly.provider_payload)["messages"][-1] == {
        "role": "assistant",
        "content": "Lantern (calm):",
    }
    assert assembly.variables["mood"] == "calm"


def test_the_prefill_is_merged_into_a_trailing_assistant_message() -> None:
    preset = build_preset(
        [
            make_node("main", content="Main."),
            marker("chatHistory"),
            make_node("tail", content="Noted.", role="assistant"),
        ],
        settings={"assistant_prefill": "Lantern:"},
    )
    assembly = assemble(document(history=HISTORY[:3]), preset=preset, provider="anthropic")
    assert assembly.messages[-1].content == "Noted.\n\nLantern:"
    assert roles(assembly)[-2:] == ["user", "assistant"]


def test_impersonate_prefills_with_the_impersonation_prefill() -> None:
    preset = triggered_preset(assistant_prefill="As Lantern:", assistant_impersonation="As {{user}}:")
    assembly = assemble(document(generation_type="impersonate"), preset=preset, provider="anthropic")
    assert assembly.messages[-1].content == "As Ann:"


@pytest.mark.parametrize("provider", ["openai", "gemini", None])
def test_other_providers_ignore_the_prefill_and_say_so(provider: str | None) -> None:
    preset = triggered_preset(assistant_prefill="Lantern:")
    assembly = assemble(document(history=HISTORY[:3]), preset=preset, provider=provider)
    assert "Lantern:" not in texts(assembly)
    assert any(o.source and o.source.to_dict()["name"] == "assistant_prefill" for o in assembly.omitted)


def test_a_normal_reply_has_no_generation_prompts() -> None:
    assembly = assemble(document(history=HISTORY[:3]), preset=triggered_preset())
    assert texts(assembly)[-1] == "After the history."
    assert texts(assembly)[-2] == "Ann: Light it, please."


def test_depth_injections_still_land_in_the_history_when_continuing() -> None:
    preset = build_preset(
        [make_node("main", content="Main."), marker("chatHistory"), depth("note", "Stay warm.", 0)]
    )
    assembly = assemble(document(generation_type="continue"), preset=preset)
    assert texts(assembly)[-2] == "The wick catches and"
    assert "Stay warm." not in texts(assembly)[-2]
    assert any("Stay warm." in text for text in texts(assembly)[:-2])
