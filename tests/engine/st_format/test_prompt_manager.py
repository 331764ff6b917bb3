"""docs/import.md#prompt-manager-presets: order choice, unknown and duplicate identifiers, field
normalisation, kinds, markers."""

from __future__ import annotations

import pytest

from .conftest import node, pm_preset, prompt, warned

PROMPTS = [prompt("main", "M"), prompt("a", "A"), prompt("b", "B"), prompt("chatHistory", marker=True)]


def _orders(*entries: tuple[object, list[str]]) -> list[dict]:
    return [
        {"character_id": cid, "order": [{"identifier": i, "enabled": True} for i in ids]}
        for cid, ids in entries
    ]


def test_the_order_of_character_100001_wins_over_100000(parse) -> None:
    data = {"prompts": PROMPTS, "prompt_order": _orders((100000, ["a", "main"]), (100001, ["b", "a"]))}
    assert [n.identifier for n in parse(data).nodes] == ["b", "a"]


def test_the_order_of_character_100000_is_used_when_100001_is_absent(parse) -> None:
    data = {"prompts": PROMPTS, "prompt_order": _orders((100000, ["a", "main"]), (5, ["b"]))}
    assert [n.identifier for n in parse(data).nodes] == ["a", "main"]


def test_a_character_id_written_as_a_string_counts(parse) -> None:
    data = {"prompts": PROMPTS, "prompt_order": _orders((100000, ["a"]), ("100001", ["b"]))}
    assert [n.identifier for n in parse(data).nodes] == ["b"]


def test_without_a_known_order_every_prompt_is_used_in_array_order(parse) -> None:
    prompts = [prompt("main", "M"), prompt("a", "A", enabled=False), prompt("b", "B", enabled=None)]
    parsed = parse({"prompts": prompts, "prompt_order": _orders((7, ["a"]))})
    assert [(n.identifier, n.enabled) for n in parsed.nodes] == [("main", True), ("a", False), ("b", True)]
    assert parsed.summary.not_in_order == 0


def test_the_order_entry_decides_whether_a_node_is_enabled(parse) -> None:
    order = [{"identifier": "main", "enabled": False}, {"identifier": "a", "enabled": True}]
    parsed = parse(pm_preset([prompt("main", "M", enabled=True), prompt("a", "A")], order=order))
    assert [n.enabled for n in parsed.nodes] == [False, True]


def test_a_bare_string_order_entry_is_an_enabled_identifier(parse) -> None:
    parsed = parse(pm_preset(PROMPTS, order=["a", {"identifier": "b", "enabled": False}]))
    assert [(n.identifier, n.enabled) for n in parsed.nodes] == [("a", True), ("b", False)]


def test_prompts_absent_from_the_order_are_not_nodes_but_are_counted(parse) -> None:
    parsed = parse(pm_preset(PROMPTS, order=[{"identifier": "main", "enabled": True}]))
    assert [n.identifier for n in parsed.nodes] == ["main"]
    assert parsed.summary.not_in_order == 3


def test_order_entries_naming_unknown_prompts_are_skipped_and_warned(parse) -> None:
    order = [{"identifier": "ghost", "enabled": True}, {"identifier": "a", "enabled": True}]
    parsed = parse(pm_preset(PROMPTS, order=order))
    assert [n.identifier for n in parsed.nodes] == ["a"]
    assert warned(parsed, "naming no prompt, skipped: ghost.")


def test_a_duplicate_prompt_identifier_keeps_the_first_and_warns(parse) -> None:
    prompts = [prompt("main", "first"), prompt("main", "second")]
    parsed = parse(pm_preset(prompts, order=[{"identifier": "main", "enabled": True}]))
    assert node(parsed, "main").content == "first"
    assert warned(parsed, "Duplicate prompt identifiers, first one kept: main.")


def test_a_duplicate_order_entry_keeps_the_first_and_warns(parse) -> None:
    order = [{"identifier": "a", "enabled": False}, {"identifier": "b"}, {"identifier": "a", "enabled": True}]
    parsed = parse(pm_preset(PROMPTS, order=order))
    assert [(n.identifier, n.enabled) for n in parsed.nodes] == [("a", False), ("b", True)]
    assert warned(parsed, "listed twice in the prompt order")


def test_a_prompt_without_an_identifier_gets_a_stable_one_and_a_warning(parse) -> None:
    parsed = parse({"prompts": [prompt("main", "M"), {"name": "Loose", "content": "L"}]})
    assert node(parsed, "prompt_2").content == "L"
    assert warned(parsed, "Loose (prompt_2)")


@pytest.mark.parametrize(
    ("raw_role", "role"),
    [
        ("user", "user"),
        (" Assistant ", "assistant"),
        ("system", "system"),
        ("narrator", "system"),
        ("", "system"),
    ],
)
def test_a_role_is_normalised_to_system_user_or_assistant(parse, raw_role: str, role: str) -> None:
    assert parse(pm_preset([prompt("a", "A", role=raw_role)])).nodes[0].role == role


def test_an_unknown_role_is_warned(parse) -> None:
    assert warned(parse(pm_preset([prompt("a", "A", name="Narrator", role="narrator")])), "unknown role")


def test_a_missing_role_on_a_content_node_is_system_and_warned(parse) -> None:
    parsed = parse(pm_preset([prompt("a", "A")]))
    assert parsed.nodes[0].role == "system"
    assert warned(parsed, "unknown role, sent as system: a.")


def test_a_missing_role_on_a_marker_is_not_warned(parse) -> None:
    assert not warned(parse(pm_preset([prompt("chatHistory", marker=True)])), "role")


def test_whole_number_strings_with_spaces_are_accepted(parse) -> None:
    data = pm_preset(
        [prompt("a", "A", injection_position=" 1 ", injection_depth=" 90 ", injection_order="-5")]
    )
    n = parse(data).nodes[0]
    assert (n.injection_position, n.injection_depth, n.injection_order) == (1, 90, -5)


def test_missing_injection_fields_take_the_defaults_silently(parse) -> None:
    history = prompt("chatHistory", marker=True)
    parsed = parse(pm_preset([prompt("a", "A", role="system", injection_position=None), history]))
    n = parsed.nodes[0]
    assert (n.injection_position, n.injection_depth, n.injection_order) == (0, 4, 100)
    assert not parsed.summary.warnings


def test_values_beyond_32_bits_are_clamped(parse) -> None:
    n = parse(pm_preset([prompt("a", "A", injection_depth=2**40, injection_order=-(2**40))])).nodes[0]
    assert (n.injection_depth, n.injection_order) == (2**31 - 1, -(2**31))


@pytest.mark.parametrize("bad", ["deep", 4.5, [4], {"d": 4}, True, ""])
def test_a_bad_depth_takes_the_default_with_a_warning(parse, bad: object) -> None:
    parsed = parse(pm_preset([prompt("a", "A", role="system", injection_depth=bad)]))
    assert parsed.nodes[0].injection_depth == 4
    assert warned(parsed, "Injection depth that is not a whole number, 4 used: a.")


def test_an_injection_position_other_than_0_or_1_is_relative_with_a_warning(parse) -> None:
    parsed = parse(pm_preset([prompt("a", "A", role="system", injection_position=2)]))
    assert parsed.nodes[0].injection_position == 0
    assert warned(parsed, "Injection position other than 0 or 1")


def test_a_bad_order_value_takes_the_default_with_a_warning(parse) -> None:
    parsed = parse(pm_preset([prompt("a", "A", role="system", injection_order="first")]))
    assert parsed.nodes[0].injection_order == 100
    assert warned(parsed, "Injection order that is not a whole number, 100 used")


def test_the_injection_trigger_and_forbid_overrides_are_kept(parse) -> None:
    data = pm_preset([prompt("a", "A", injection_trigger=["normal", "swipe"], forbid_overrides=True)])
    n = parse(data).nodes[0]
    assert n.injection_trigger == ("normal", "swipe") and n.forbid_overrides is True


def test_one_bad_prompt_entry_does_not_reject_the_preset(parse) -> None:
    parsed = parse({"prompts": ["not an object", prompt("main", "M", role="system")]})
    assert [n.identifier for n in parsed.nodes] == ["main"]
    assert warned(parsed, "not objects, skipped: #1.")


def test_a_marker_keeps_its_content_but_is_a_marker(parse) -> None:
    n = parse(pm_preset([prompt("charDescription", "leftover text", marker=True)])).nodes[0]
    assert (n.kind, n.content) == ("marker", "leftover text")


@pytest.mark.parametrize(
    "content",
    ["{{// a note }}", "  {{// one }}\n{{trim}}\n{{// two {{nested}} } }}  ", "{{trim}}", "{{ // spaced }}"],
)
def test_text_made_only_of_comments_and_trim_is_a_comment(parse, content: str) -> None:
    n = parse(pm_preset([prompt("c", content, role="system")])).nodes[0]
    assert n.kind == "comment" and not n.toggleable


@pytest.mark.parametrize(
    "content", ["{{// note }} and text", "", "   ", "{{// never closed", "{{setvar::a::1}}"]
)
def test_anything_else_is_a_content_node(parse, content: str) -> None:
    n = parse(pm_preset([prompt("c", content, role="system")])).nodes[0]
    assert n.kind == "content" and n.toggleable


def test_main_without_the_marker_flag_is_a_content_node(parse) -> None:
    assert node(parse(pm_preset(PROMPTS)), "main").kind == "content"


def test_an_unrecognised_marker_with_its_system_prompt_flag_off_is_a_prompt_as_in_sillytavern(parse) -> None:
    # SillyTavern 1.18 sends such a marker's text like any prompt of the preset's own
    # (docs/assembly.md#what-sillytavern-118-corrected)
    parsed = parse(
        pm_preset(
            [prompt("nemo-section", "Section text", marker=True, system_prompt=False, name="World Augments")]
        )
    )
    assert parsed.nodes[0].kind == "content"
    assert warned(
        parsed, "Unrecognised markers, sent as prompts as SillyTavern 1.18 sends them: World Augments."
    )


def test_an_unrecognised_marker_flagged_as_a_system_prompt_stays_a_marker(parse) -> None:
    parsed = parse(pm_preset([prompt("odd", "Never sent", marker=True, system_prompt=True, name="Odd")]))
    assert parsed.nodes[0].kind == "marker"


def test_chat_history_is_not_toggleable(parse) -> None:
    assert not node(parse(pm_preset(PROMPTS)), "chatHistory").toggleable


def test_a_marker_keeps_its_enabled_state_from_the_order(parse) -> None:
    order = [{"identifier": "dialogueExamples", "enabled": False}]
    n = parse(pm_preset([prompt("dialogueExamples", marker=True)], order=order)).nodes[0]
    assert (n.kind, n.enabled, n.toggleable) == ("marker", False, True)


def test_a_prompt_of_the_presets_own_flagged_as_a_system_prompt_is_imported_switched_off(parse) -> None:
    # SillyTavern 1.18 never sends such a prompt (lucid-loom-v3.0 has 21 of them)
    parsed = parse(pm_preset([prompt("custom", "Never sent there", system_prompt=True, name="Flagged")]))
    assert parsed.nodes[0].enabled is False
    assert warned(
        parsed,
        "Prompts marked as system prompts, which SillyTavern 1.18 never sends: imported switched off: Flagged.",
    )


def test_a_flagged_prompt_at_a_depth_is_still_sent(parse) -> None:
    parsed = parse(pm_preset([prompt("custom", "At depth", system_prompt=True, injection_position=1)]))
    assert parsed.nodes[0].enabled is True
