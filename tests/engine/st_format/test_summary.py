"""docs/import.md#the-import-summary and the settings of docs/import.md#prompt-manager-presets: what the
import summary counts, names and warns about."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from engine.st_format import ImportSummary, PromptSettings, resummarize
from engine.st_format.summary import has_html

from .conftest import pm_preset, prompt, warned

MARKERS = [
    "worldInfoBefore",
    "charDescription",
    "charPersonality",
    "dialogueExamples",
    "worldInfoAfter",
    "chatHistory",
]


def _preset(disabled: tuple[str, ...] = (), extra: list[Any] | None = None, **top: Any) -> dict:
    prompts = [prompt("main", "M", role="system")] + [prompt(m, marker=True) for m in MARKERS] + (extra or [])
    order = [
        {"identifier": p["identifier"], "enabled": p["identifier"] not in disabled}
        for p in prompts
        if isinstance(p, dict)
    ]
    return pm_preset(prompts, order=order, **top)


def test_counts_cover_kinds_toggleables_enabled_and_depth_injections(parse) -> None:
    extra = [
        prompt("note", "{{// section }}", role="system"),
        prompt("deep", "D", role="system", injection_position=1, injection_depth=2),
        prompt("off", "O", role="user"),
        prompt("loose", "never ordered", role="system"),
    ]
    data = _preset(disabled=("off",), extra=extra)
    data["prompt_order"][0]["order"] = [
        e for e in data["prompt_order"][0]["order"] if e["identifier"] != "loose"
    ]
    s = parse(data).summary
    assert (s.nodes, s.markers, s.content, s.comments) == (10, 6, 3, 1)
    assert s.toggleable == 8  # all but the comment and chatHistory
    assert s.enabled == 7  # "off" is disabled
    assert s.depth_injections == 1
    assert s.not_in_order == 1
    assert s.shape == "prompt_manager"


def test_disabled_markers_name_the_server_blocks_they_hide(parse) -> None:
    s = parse(_preset(disabled=("charDescription", "dialogueExamples"))).summary
    assert s.hidden_blocks == (
        "persona prompt: charDescription is disabled",
        "sample dialogues: dialogueExamples is disabled",
    )


def test_documents_are_hidden_only_when_every_world_info_marker_is_disabled(parse) -> None:
    assert parse(_preset(disabled=("worldInfoBefore",))).summary.hidden_blocks == ()
    s = parse(_preset(disabled=("worldInfoBefore", "worldInfoAfter"))).summary
    assert s.hidden_blocks == ("documents: worldInfoBefore and worldInfoAfter are disabled",)


def test_a_disabled_chat_history_is_warned_as_sending_no_conversation(parse) -> None:
    assert warned(parse(_preset(disabled=("chatHistory",))), "the bot sends no conversation with this preset")


def test_a_preset_without_chat_history_is_warned_as_sending_no_conversation(parse) -> None:
    parsed = parse(pm_preset([prompt("main", "Be kind.", role="system")]))
    assert warned(parsed, "The preset has no Chat History node")


def test_unsupported_macros_of_enabled_nodes_are_listed_past_four_as_more(parse) -> None:
    text = "{{alpha}} {{beta}} {{gamma}} {{delta}} {{epsilon}} {{zeta}} {{char}} {{getvar::x}}"
    parsed = parse(_preset(extra=[prompt("m", text, role="system")]))
    assert set(parsed.summary.unsupported_macros) == {"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}
    (warning,) = warned(parsed, "macros that are not supported")
    assert warning.endswith(" +2 more.")
    assert warning.count(",") == 3


def test_unsupported_macros_of_disabled_nodes_are_not_listed(parse) -> None:
    parsed = parse(_preset(disabled=("m",), extra=[prompt("m", "{{mystery}}", role="system")]))
    assert parsed.summary.unsupported_macros == ()
    assert not warned(parsed, "not supported")


def test_enabled_nodes_with_html_tags_are_named(parse) -> None:
    extra = [
        prompt("status", 'Show <div class="bar">HP</div>', name="Status bar", role="system"),
        prompt("xml", "<rules>Be kind.</rules>", name="Rules", role="system"),
        prompt("off", "<details>x</details>", name="Hidden", role="system"),
    ]
    parsed = parse(_preset(disabled=("off",), extra=extra))
    assert parsed.summary.html_nodes == ("Status bar",)
    assert warned(parsed, "Discord shows as plain text: Status bar.")


def test_enabled_nodes_triggered_only_by_other_generation_types_are_warned(parse) -> None:
    parsed = parse(
        _preset(extra=[prompt("q", "Q", name="Quiet only", role="system", injection_trigger=["quiet"])])
    )
    assert warned(parsed, "are left out of normal replies: Quiet only.")


def test_the_generation_type_and_prefill_settings_are_applied_not_kept(parse) -> None:
    settings: dict[str, Any] = {
        "assistant_prefill": "Lantern:",
        "assistant_impersonation": "Ann:",
        "continue_prefill": True,
        "continue_nudge_prompt": "[Go on: {{lastChatMessage}}]",
        "impersonation_prompt": "[Be {{user}}.]",
    }
    parsed = parse(_preset(**settings))
    assert not set(settings) & set(parsed.summary.kept_not_applied)
    assert parsed.settings.assistant_prefill == "Lantern:"
    assert parsed.settings.continue_prefill is True
    assert parsed.settings.continue_nudge_prompt == "[Go on: {{lastChatMessage}}]"


def test_top_level_extras_are_kept_but_not_applied(parse) -> None:
    data = _preset(
        temperature=0.9, openai_model="gpt-4o", extensions={"regex_scripts": []}, squash_system_messages=True
    )
    kept = parse(data).summary.kept_not_applied
    assert kept == ("openai_model", "extensions.regex_scripts")


def test_sampler_settings_are_read_and_no_longer_called_kept_but_not_applied(parse) -> None:
    parsed = parse(_preset(temperature=0.9, top_k=40, seed=None, typical_p=0.9))
    assert parsed.sampling == {"temperature": 0.9, "top_k": 40}
    assert parsed.summary.sampler_settings == ("temperature", "top_k")
    assert parsed.summary.kept_not_applied == ("typical_p",)


def test_prompt_shaping_settings_are_applied(parse) -> None:
    data = _preset(
        squash_system_messages=True,
        personality_format="[{{personality}}]",
        scenario_format="S: {{scenario}}",
        wi_format="WI: {0}",
        new_example_chat_prompt="",
    )
    assert parse(data).settings == PromptSettings(True, "[{{personality}}]", "S: {{scenario}}", "WI: {0}", "")


def test_missing_settings_take_sillytaverns_defaults(parse) -> None:
    assert parse(_preset()).settings == PromptSettings(
        False, "{{personality}}", "{{scenario}}", "{0}", "[Example Chat]"
    )


def test_a_setting_of_the_wrong_type_falls_back_to_the_default_with_a_warning(parse) -> None:
    parsed = parse(_preset(wi_format=3, squash_system_messages="yes"))
    assert parsed.settings.wi_format == "{0}" and parsed.settings.squash_system_messages is False
    assert warned(parsed, "squash_system_messages, wi_format")


def test_every_warning_is_one_sentence_ending_with_a_full_stop(parse) -> None:
    extra: list[Any] = [prompt("x", "{{a}}<b>x</b>", role="narrator", injection_depth="deep"), "junk"]
    parsed = parse(_preset(disabled=("chatHistory",), extra=extra))
    assert len(parsed.summary.warnings) >= 5
    assert all(w.endswith(".") and "\n" not in w for w in parsed.summary.warnings)


def test_the_summary_round_trips_through_json(parse) -> None:
    s = parse(
        _preset(disabled=("charDescription",), extra=[prompt("m", "{{mystery}}", role="system")])
    ).summary
    assert ImportSummary.from_dict(json.loads(json.dumps(s.to_dict()))) == s


def test_resummarize_recounts_after_a_toggle_and_keeps_the_import_warnings(parse) -> None:
    parsed = parse(_preset(extra=[prompt("m", "{{mystery}}", role="narrator")]))
    toggled = [
        replace(n, enabled=False) if n.identifier in ("m", "charDescription") else n for n in parsed.nodes
    ]
    s = resummarize(parsed.summary, toggled)
    assert s.enabled == parsed.summary.enabled - 2
    assert s.hidden_blocks == ("persona prompt: charDescription is disabled",)
    assert s.unsupported_macros == ()
    assert s.import_warnings == parsed.summary.import_warnings
    assert any("unknown role" in w for w in s.warnings)


@pytest.mark.parametrize(
    ("text", "html"),
    [
        ("<br/>", True),
        ("<br />", True),
        ('<div class="bar">', True),
        ("</DETAILS>", True),
        ("< span >", False),
        ("<font color=red>x</font>", True),
        ("<rules>x</rules>", False),
        ("<assistant>", False),
        ("a < b and c > d", False),
        ("<div " + " " * 1000, False),
    ],
)
def test_html_detection_counts_real_html_elements_only(text: str, html: bool) -> None:
    assert has_html(text) is html


def test_the_new_chat_prompt_and_names_behavior_are_applied_not_kept(parse) -> None:
    # docs/assembly.md#what-sillytavern-118-corrected: SillyTavern sends new_chat_prompt before the history
    # and places names by names_behavior
    parsed = parse(_preset(new_chat_prompt="[A new scene]", names_behavior=1))
    assert not {"new_chat_prompt", "names_behavior"} & set(parsed.summary.kept_not_applied)
    assert parsed.settings.new_chat_prompt == "[A new scene]"
    assert parsed.settings.names_behavior == 1


def test_the_group_prompts_are_applied_not_kept(parse) -> None:
    # docs/groups.md: in a group SillyTavern sends new_group_chat_prompt and the group nudge
    parsed = parse(
        _preset(new_group_chat_prompt="[A party of {{group}}]", group_nudge_prompt="[Only {{char}}]")
    )
    assert not {"new_group_chat_prompt", "group_nudge_prompt"} & set(parsed.summary.kept_not_applied)
    assert parsed.settings.new_group_chat_prompt == "[A party of {{group}}]"
    assert parsed.settings.group_nudge_prompt == "[Only {{char}}]"


def test_an_unknown_names_behavior_falls_back_to_sillytaverns_default_with_a_warning(parse) -> None:
    parsed = parse(_preset(names_behavior=7))
    assert parsed.settings.names_behavior == 0
    assert warned(parsed, "names_behavior")
