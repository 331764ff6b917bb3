"""Script objects, replacement rules with macros, and where each kind of script runs (docs/regex.md)."""

from __future__ import annotations

from typing import Any

import pytest

from engine.regex import (
    RegexRequest,
    ScriptError,
    apply_to_entries,
    apply_to_history,
    clean_reply,
    clean_user_message,
    compile_scripts,
    parse_script,
    parse_scripts,
    split_reasoning,
)


def script(find: str, replace: str = "", **fields: Any) -> dict[str, Any]:
    return {"id": fields.pop("id", find), "scriptName": fields.pop("name", find), "findRegex": find,
            "replaceString": replace, "placement": fields.pop("placement", [2]), **fields}  # fmt: skip


def compiled(*objects: dict[str, Any]):
    return compile_scripts(parse_scripts(list(objects)))


REQUEST = RegexRequest(seed=7, user="Alice", char="Nemo")


def test_a_minimal_script_gets_sillytaverns_defaults():
    parsed = parse_script({"findRegex": "/x/g"})
    assert (parsed.replace_string, parsed.trim_strings, parsed.placement) == ("", (), frozenset())
    assert not (parsed.disabled or parsed.markdown_only or parsed.prompt_only)
    assert (parsed.min_depth, parsed.max_depth, parsed.substitute_regex) == (None, None, 0)


def test_legacy_placement_0_is_dropped_and_4_means_slash_commands():
    assert parse_script({"findRegex": "x", "placement": [0, 4, 2]}).placement == {3, 2}


def test_an_export_may_be_one_script_or_a_list_and_anything_else_is_refused():
    assert len(parse_scripts({"findRegex": "x"})) == 1
    assert len(parse_scripts([{"findRegex": "x"}, {"findRegex": "y"}])) == 2
    with pytest.raises(ScriptError):
        parse_scripts("x")
    with pytest.raises(ScriptError, match="Script 2"):
        parse_scripts([{"findRegex": "x"}, {"scriptName": "no pattern"}])


def test_a_pattern_javascript_rejects_makes_the_script_inactive_with_its_reason():
    (bad,) = compiled(script("/(?<x/g"))
    assert bad.inactive and "Not a valid JavaScript regular expression" in bad.inactive
    cleaned = clean_reply([bad], "text", REQUEST)
    assert cleaned.stored == "text"
    assert cleaned.errors[0].script == "/(?<x/g"


def test_a_macro_in_the_replacement_is_rendered_with_the_request_seed():
    scripts = compiled(script("/sigh/", "{{random::huff::puff::grumble::hum}} {{user}}"))
    first = clean_reply(scripts, "sigh", REQUEST).stored
    assert first in {"huff Alice", "puff Alice", "grumble Alice", "hum Alice"}
    assert all(clean_reply(scripts, "sigh", REQUEST).stored == first for _ in range(3))
    others = {
        clean_reply(scripts, "sigh", RegexRequest(seed=seed, user="Alice")).stored for seed in range(40)
    }
    assert len(others) > 1


def test_a_macro_around_group_references_keeps_the_groups():
    scripts = compiled(script("/without thinking (\\w+)/", "{{random:$1 at once,$1 on instinct}}"))
    assert clean_reply(scripts, "without thinking she ran", REQUEST).stored in {
        "she at once ran",
        "she on instinct ran",
    }


def test_trim_strings_are_macro_substituted_then_removed_from_inserted_groups():
    scripts = compiled(script("/<(.*)>/", "[$1]", trimStrings=["{{char}}: "]))
    assert clean_reply(scripts, "<Nemo: hello>", REQUEST).stored == "[hello]"


def test_substitute_regex_1_puts_macros_into_the_pattern_raw():
    scripts = compiled(script("/{{char}}+/g", "X", substituteRegex=1))
    assert clean_reply(scripts, "Nemooo Nem", RegexRequest(char="Nemo")).stored == "X Nem"
    dotted = compiled(script("/{{char}}/g", "X", substituteRegex=1))
    assert clean_reply(dotted, "a.c abc", RegexRequest(char="a.c")).stored == "X X"


def test_substitute_regex_2_escapes_what_the_macros_produced():
    scripts = compiled(script("/{{char}}$/g", "X", substituteRegex=2))
    assert clean_reply(scripts, "abc a.c", RegexRequest(char="a.c")).stored == "abc X"
    assert clean_reply(scripts, "a.c abc", RegexRequest(char="a.c")).stored == "a.c abc"


def history(count: int) -> list[tuple[str, str]]:
    return [("user" if i % 2 == 0 else "assistant", f"msg {i} [tracker]") for i in range(count)]


def test_min_and_max_depth_are_inclusive_and_depth_0_is_the_newest():
    scripts = compiled(
        script("/ \\[tracker\\]/", "", promptOnly=True, placement=[1, 2], minDepth=1, maxDepth=2)
    )
    result = apply_to_history(scripts, history(5), REQUEST)
    assert result.texts == ["msg 0 [tracker]", "msg 1 [tracker]", "msg 2", "msg 3", "msg 4 [tracker]"]
    assert sorted(result.changed_by) == [2, 3]
    assert result.changed_by[2][0].name == "/ \\[tracker\\]/"


def test_prompt_scripts_use_the_message_role_for_placement():
    scripts = compiled(script("/msg/", "M", promptOnly=True, placement=[1]))
    assert apply_to_history(scripts, history(2), REQUEST).texts == ["M 0 [tracker]", "msg 1 [tracker]"]


def test_only_prompt_only_scripts_run_on_the_prompt():
    scripts = compiled(
        script("/a/g", "P", promptOnly=True),
        script("/b/g", "M", markdownOnly=True),
        script("/c/g", "N"),
        script("/d/g", "B", promptOnly=True, markdownOnly=True),
    )
    assert apply_to_history(scripts, [("assistant", "abcd")], REQUEST).texts == ["PbcB"]


def test_neither_flag_runs_only_in_stored_and_markdown_only_only_in_display():
    scripts = compiled(
        script("/a/g", "P", promptOnly=True),
        script("/b/g", "M", markdownOnly=True),
        script("/c/g", "N"),
    )
    cleaned = clean_reply(scripts, "abc", REQUEST)
    assert (cleaned.stored, cleaned.display) == ("abN", "aMN")
    assert [(a.script, a.where) for a in cleaned.applied] == [("/c/g", "stored"), ("/b/g", "display")]


def test_the_reasoning_block_is_split_off_and_placement_6_scripts_clean_it():
    scripts = compiled(script("/secret/g", "[hidden]", placement=[6]), script("/secret/g", "S"))
    cleaned = clean_reply(scripts, "  <think>a secret plan</think>\n\nHello secret", REQUEST)
    assert cleaned.reasoning == "a [hidden] plan"
    assert cleaned.stored == cleaned.display == "Hello S"


def test_a_reply_without_a_reasoning_block_has_no_reasoning():
    assert clean_reply([], "Hi <think>x</think>", REQUEST).reasoning is None
    assert split_reasoning("<thinking>x</thinking>hi", prefix="<thinking>", suffix="</thinking>") == (
        "hi",
        "x",
    )


def test_impersonation_uses_the_user_input_placement():
    scripts = compiled(script("/x/", "U", placement=[1]), script("/x/", "A", placement=[2]))
    assert clean_reply(scripts, "x", REQUEST, impersonate=True).stored == "U"
    assert clean_reply(scripts, "x", REQUEST).stored == "A"


def test_a_user_message_is_cleaned_by_user_input_scripts_with_neither_flag():
    scripts = compiled(
        script("/x/", "U", placement=[1]), script("/x/", "M", placement=[1], markdownOnly=True)
    )
    cleaned = clean_user_message(scripts, "x", REQUEST)
    assert (cleaned.stored, cleaned.display, cleaned.reasoning) == ("U", "U", None)


def test_a_catastrophic_script_is_stopped_reported_and_leaves_the_text():
    scripts = compiled(script("/(a+)+$/", "Z"), script("/b/", "B"))
    cleaned = clean_reply(scripts, "a" * 60 + "b", REQUEST)
    assert cleaned.stored == "a" * 60 + "B"
    assert [e.script for e in cleaned.errors] == ["/(a+)+$/"]
    assert "Stopped after 50 ms" in cleaned.errors[0].error


def test_world_info_scripts_run_on_entries_with_the_depth_only_for_at_depth_entries():
    scripts = compiled(script("/lore/g", "LORE", promptOnly=True, placement=[5], maxDepth=2))
    result = apply_to_entries(scripts, [("lore a", None), ("lore b", 4), ("lore c", 1)], REQUEST)
    assert result.texts == ["LORE a", "lore b", "LORE c"]


def test_a_disabled_script_does_not_run():
    scripts = compiled(script("/x/", "Y", disabled=True))
    assert clean_reply(scripts, "x", REQUEST).stored == "x"
    assert clean_reply(scripts, "x", REQUEST).errors == ()
