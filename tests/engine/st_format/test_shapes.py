"""docs/import.md#recognised-shapes: the five shapes, first match wins."""

from __future__ import annotations

from .conftest import is_one_sentence, node, pm_preset, prompt, warned


def test_a_non_empty_prompts_list_is_a_prompt_manager_preset(parse) -> None:
    data = pm_preset([prompt("main", "Hi")], main_prompt="old text", story_string="{{system}}")
    assert parse(data).shape == "prompt_manager"


def test_an_old_chat_preset_converts_to_sillytaverns_default_order(parse) -> None:
    parsed = parse({"main_prompt": "M", "nsfw_prompt": "N", "jailbreak_prompt": "J", "temperature": 0.9})
    assert parsed.shape == "pre_prompt_manager"
    assert [n.identifier for n in parsed.nodes] == [
        "main",
        "worldInfoBefore",
        "personaDescription",
        "charDescription",
        "charPersonality",
        "scenario",
        "nsfw",
        "worldInfoAfter",
        "dialogueExamples",
        "chatHistory",
        "jailbreak",
    ]
    assert all(n.enabled for n in parsed.nodes)
    assert (
        node(parsed, "main").content,
        node(parsed, "nsfw").content,
        node(parsed, "jailbreak").content,
    ) == (
        "M",
        "N",
        "J",
    )
    assert warned(parsed, "converted from an old preset format")


def test_an_old_chat_preset_with_only_a_jailbreak_prompt_still_converts(parse) -> None:
    parsed = parse({"jailbreak_prompt": "J"})
    assert parsed.shape == "pre_prompt_manager"
    assert node(parsed, "main").content == ""


def test_an_empty_prompts_list_falls_through_to_the_next_shape(parse) -> None:
    assert parse({"prompts": [], "main_prompt": "M"}).shape == "pre_prompt_manager"


def test_a_story_string_makes_a_text_completion_preset(parse) -> None:
    parsed = parse({"story_string": "{{#if system}}{{system}}{{/if}}", "name": "ctx"})
    assert parsed.shape == "text_completion"
    assert "converted from a text-completion preset" in parsed.summary.notes


def test_a_system_prompt_preset_becomes_main_and_chat_history(parse) -> None:
    parsed = parse({"name": "Actor", "content": "You are an actor."})
    assert parsed.shape == "system_prompt"
    assert [(n.identifier, n.kind, n.content) for n in parsed.nodes] == [
        ("main", "content", "You are an actor."),
        ("chatHistory", "marker", ""),
    ]


def test_an_old_instruct_template_with_a_system_prompt_becomes_a_system_prompt_preset(parse) -> None:
    parsed = parse(
        {"input_sequence": "<|user|>", "output_sequence": "<|bot|>", "system_prompt": "Be {{char}}."}
    )
    assert parsed.shape == "system_prompt"
    assert node(parsed, "main").content == "Be {{char}}."


def test_a_character_card_v2_is_refused_as_a_card(refusal) -> None:
    refused = refusal({"spec": "chara_card_v2", "data": {"name": "Cipher"}})
    assert (
        refused.message
        == "This is a SillyTavern character card, not a preset: import it on the Characters page."
    )


def test_a_card_without_spec_but_with_a_first_message_is_refused_as_a_card(refusal) -> None:
    assert "character card" in refusal({"data": {"first_mes": "Hello"}}).message


def test_a_lorebook_is_refused_as_world_info(refusal) -> None:
    refused = refusal({"entries": {"0": {"key": ["x"], "content": "y"}}})
    assert refused.message == (
        "This is a SillyTavern World Info (lorebook) file, not a preset: import it on the Lorebooks page instead."
    )


def test_an_instruct_template_without_a_system_prompt_is_refused_as_one(refusal) -> None:
    refused = refusal({"input_sequence": "<|im_start|>user", "output_sequence": "<|im_start|>assistant"})
    assert "instruct template without a system prompt" in refused.message
    assert is_one_sentence(refused.message)


def test_sampler_settings_alone_are_refused_as_sampler_settings(refusal) -> None:
    refused = refusal({"temp": 0.7, "top_p": 0.9})
    assert "sampler settings" in refused.message and is_one_sentence(refused.message)


def test_anything_else_is_refused_as_not_a_preset(refusal) -> None:
    refused = refusal({"hello": "world"})
    assert refused.message == "This is not a SillyTavern preset: expected a `prompts` list or a story string."
