"""docs/import.md#story-strings: story strings become nodes; chat-template tokens go; nothing of the system
prompt is lost."""

from __future__ import annotations

from .conftest import node, warned


def _tc(story: str, system: str = "SYS", **extra: object) -> dict:
    return {"context": {"story_string": story}, "sysprompt": {"name": "s", "content": system}, **extra}


def _ids(parsed) -> list[str]:
    return [n.identifier for n in parsed.nodes]


def test_blocks_become_markers_in_story_order_and_chat_history_ends(parse) -> None:
    story = (
        "{{#if system}}{{system}}\n{{/if}}{{#if wiBefore}}{{wiBefore}}\n{{/if}}{{#if description}}{{description}}\n"
        "{{/if}}{{#if personality}}{{personality}}{{/if}}{{#if scenario}}{{scenario}}{{/if}}{{#if wiAfter}}"
        "{{wiAfter}}{{/if}}{{#if persona}}{{persona}}{{/if}}{{#if mesExamples}}{{mesExamples}}{{/if}}"
    )
    parsed = parse(_tc(story))
    assert _ids(parsed) == [
        "main",
        "worldInfoBefore",
        "charDescription",
        "charPersonality",
        "scenario",
        "worldInfoAfter",
        "personaDescription",
        "dialogueExamples",
        "chatHistory",
    ]
    assert parsed.shape == "text_completion"
    assert node(parsed, "main").content == "SYS"
    assert node(parsed, "main").kind == "content"
    assert node(parsed, "charDescription").kind == "marker"


def test_lore_blocks_map_to_world_info(parse) -> None:
    parsed = parse(_tc("{{#if loreBefore}}{{loreBefore}}{{/if}}{{#if loreAfter}}{{loreAfter}}{{/if}}"))
    assert _ids(parsed)[1:3] == ["worldInfoBefore", "worldInfoAfter"]


def test_text_around_a_placeholder_is_the_markers_prefix_and_suffix(parse) -> None:
    parsed = parse(_tc("{{#if personality}}{{char}}'s personality: {{personality}}\n{{/if}}"))
    marker = node(parsed, "charPersonality")
    assert (marker.prefix, marker.suffix, marker.content) == ("{{char}}'s personality: ", "\n", "")


def test_text_between_blocks_becomes_story_text_nodes_with_stable_identifiers(parse) -> None:
    story = "Intro {{char}}.\n{{#if description}}{{description}}{{/if}}\n \n{{#if scenario}}{{scenario}}{{/if}}Outro."
    parsed = parse(_tc(story))
    assert _ids(parsed) == ["main", "legacy_1", "charDescription", "scenario", "legacy_2", "chatHistory"]
    assert node(parsed, "legacy_1").content == "Intro {{char}}.\n"
    assert node(parsed, "legacy_2").content == "Outro."
    assert node(parsed, "legacy_1").name == "Story text"


def test_whitespace_only_text_between_blocks_makes_no_node(parse) -> None:
    parsed = parse(_tc("{{#if description}}{{description}}{{/if}}\n\n  {{#if scenario}}{{scenario}}{{/if}}"))
    assert not [n for n in parsed.nodes if n.identifier.startswith("legacy_")]


def test_reimporting_gives_the_same_identifiers(parse) -> None:
    story = "A{{#if description}}{{description}}{{/if}}B{{#if custom}}C{{/if}}D"
    assert _ids(parse(_tc(story))) == _ids(parse(_tc(story)))


def test_nested_blocks_take_the_outermost_block(parse) -> None:
    story = "{{#if description}}Desc: {{description}}{{#if personality}} / {{personality}}{{/if}}{{/if}}Tail"
    parsed = parse(_tc(story))
    assert _ids(parsed) == ["main", "charDescription", "legacy_1", "chatHistory"]
    marker = node(parsed, "charDescription")
    assert marker.prefix == "Desc: " and marker.suffix == " / {{personality}}"
    assert node(parsed, "legacy_1").content == "Tail"
    assert warned(parsed, "Nested blocks flattened into their outer block: description.")


def test_text_around_system_inside_its_block_becomes_content_nodes_beside_main(parse) -> None:
    parsed = parse(_tc("{{#if system}}<rules>\n{{system}}\n</rules>\n{{/if}}"))
    assert _ids(parsed) == ["legacy_1", "main", "legacy_2", "chatHistory"]
    assert node(parsed, "legacy_1").content == "<rules>\n"
    assert node(parsed, "main").content == "SYS"
    assert node(parsed, "legacy_2").content == "\n</rules>\n"


def test_a_system_block_without_its_placeholder_still_keeps_the_system_prompt(parse) -> None:
    parsed = parse(_tc("{{#if system}}Follow the rules below.{{/if}}", system="Rule one."))
    assert _ids(parsed) == ["legacy_1", "main", "chatHistory"]
    assert node(parsed, "legacy_1").content == "Follow the rules below."
    assert node(parsed, "main").content == "Rule one."


def test_a_story_string_without_a_system_block_puts_the_system_prompt_first(parse) -> None:
    parsed = parse(_tc("{{#if description}}{{description}}{{/if}}", system="Rule one."))
    assert _ids(parsed)[0] == "main" and node(parsed, "main").content == "Rule one."
    assert warned(parsed, "no system block")


def test_anchor_blocks_are_dropped_with_a_warning(parse) -> None:
    parsed = parse(_tc("{{#if anchorBefore}}{{anchorBefore}}{{/if}}{{#if system}}{{system}}{{/if}}"))
    assert _ids(parsed) == ["main", "chatHistory"]
    assert warned(parsed, "Anchor blocks have no equivalent here and were dropped: anchorBefore.")


def test_unknown_blocks_become_content_nodes_with_their_text(parse) -> None:
    parsed = parse(_tc("{{#if charJailbreak}}Stay in character.{{/if}}"))
    extra = node(parsed, "legacy_1")
    assert (extra.kind, extra.content, extra.name) == ("content", "Stay in character.", "charJailbreak block")
    assert warned(parsed, "Unknown story-string blocks kept as text: charJailbreak.")


def test_a_bare_placeholder_outside_blocks_is_a_marker(parse) -> None:
    parsed = parse(_tc("{{system}}\n{{description}}\nEnd"))
    assert _ids(parsed) == ["main", "charDescription", "legacy_1", "chatHistory"]


def test_chatml_tokens_are_stripped_with_their_role_word_and_listed(parse) -> None:
    parsed = parse(_tc("<|im_start|>system\n{{#if system}}{{system}}{{/if}}Be brief.<|im_end|>", system="S"))
    assert node(parsed, "legacy_1").content == "Be brief."
    assert warned(
        parsed, "Chat-template tokens were removed from the converted text: <|im_start|>, <|im_end|>."
    )


def test_llama3_headers_and_eot_are_stripped(parse) -> None:
    story = "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nHello{{#if system}}{{system}}{{/if}}<|eot_id|>"
    parsed = parse(_tc(story, system="S<|eot_id|>"))
    assert node(parsed, "legacy_1").content == "Hello"
    assert node(parsed, "main").content == "S"


def test_mistral_and_gemma_tokens_are_stripped(parse) -> None:
    story = "<s>[INST] Hi [/INST]</s><start_of_turn>user\nYo<end_of_turn>\n"
    assert node(parse(_tc(story)), "legacy_1").content == "HiYo"


def test_the_master_exports_own_instruct_sequences_are_stripped(parse) -> None:
    data = _tc("### Instruction:\nStay.{{#if system}}{{system}}{{/if}}")
    data["instruct"] = {"system_sequence": "\n### Instruction:\n", "input_sequence": "User:"}
    parsed = parse(data)
    assert node(parsed, "legacy_1").content == "\nStay."
    assert warned(parsed, "### Instruction:")


def test_plain_word_instruct_sequences_are_not_stripped(parse) -> None:
    data = _tc("User: rules.{{#if system}}{{system}}{{/if}}")
    data["instruct"] = {"input_sequence": "User:"}
    assert node(parse(data), "legacy_1").content == "User: rules."


def test_the_system_prompt_can_come_from_a_root_content_next_to_a_name(parse) -> None:
    parsed = parse({"story_string": "{{#if system}}{{system}}{{/if}}", "name": "x", "content": "Root text"})
    assert node(parsed, "main").content == "Root text"


def test_the_system_prompt_can_come_from_an_old_instruct_template(parse) -> None:
    data = {
        "context": {"story_string": "{{#if system}}{{system}}{{/if}}"},
        "instruct": {"system_prompt": "Old."},
    }
    assert node(parse(data), "main").content == "Old."


def test_without_any_system_prompt_text_main_is_empty(parse) -> None:
    parsed = parse({"story_string": "{{#if system}}{{system}}{{/if}}", "name": "ctx"})
    assert node(parsed, "main").content == ""


def test_block_tags_with_odd_spacing_and_case_are_recognised(parse) -> None:
    parsed = parse(_tc("{{ #if   Description  }}D: {{ description }}{{ /if }}"))
    marker = node(parsed, "charDescription")
    assert (marker.prefix, marker.suffix) == ("D: ", "")


def test_a_stray_closing_tag_is_removed_with_a_warning(parse) -> None:
    parsed = parse(_tc("Intro{{/if}}{{#if system}}{{system}}{{/if}}"))
    assert node(parsed, "legacy_1").content == "Intro"
    assert warned(parsed, "without its `{{#if}}`")


def test_an_unclosed_block_runs_to_the_end_with_a_warning(parse) -> None:
    parsed = parse(_tc("{{#if system}}{{system}}{{#if description}}{{description}}"))
    assert [n.identifier for n in parsed.nodes][:1] == ["main"]
    assert warned(parsed, "never closed")
