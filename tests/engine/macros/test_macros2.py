"""docs/macros.md#macros-20: Macros 2.0 — scoped macros, {{if}}/{{else}}, the variable shorthand, the new
macros, escapes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engine.macros import MacroEnv, compile_text, find_unsupported_macros, resolve_identity

from .conftest import render, render_nodes

EVENING = datetime(2026, 11, 21, 20, 7, tzinfo=UTC)


# -- scoped macros -------------------------------------------------------------------------------


def test_a_scoped_setvar_stores_its_content_dedented_and_trimmed() -> None:
    text = (
        "{{setvar::greeting}}\n    Hello,\n      traveller.\n    Welcome.\n{{/setvar}}[{{getvar::greeting}}]"
    )
    assert render(text).text == "[Hello,\n  traveller.\nWelcome.]"


def test_a_line_indented_less_than_the_first_loses_all_its_indentation() -> None:
    text = "{{trim}}\n    first\n  second\n{{/trim}}"
    assert render(text).text == "first\nsecond"


def test_a_hash_opening_tag_keeps_the_scoped_content_as_written() -> None:
    text = "{{#setvar::raw}}\n  kept  \n{{/setvar}}[{{getvar::raw}}]"
    assert render(text).text == "[\n  kept  \n]"


def test_a_scoped_trim_returns_its_content_trimmed() -> None:
    assert render("a{{trim}}   \n  b  \n   {{/trim}}c").text == "abc"


def test_an_unscoped_trim_keeps_its_old_meaning() -> None:
    assert render("a\n{{trim}}\nb").text == "ab"


def test_an_unmatched_closing_tag_is_text() -> None:
    output = render("before {{/if}} after {{/setvar}}")
    assert output.text == "before {{/if}} after {{/setvar}}"
    assert not output.unknown_macros


def test_a_scoped_comment_renders_nothing_but_its_macros_still_run() -> None:
    text = "{{//}}\nA note {{setvar::seen::yes}} for authors.\n{{///}}Seen: {{getvar::seen}}"
    assert render(text).text == "Seen: yes"


def test_a_one_line_comment_is_not_a_scope_opener() -> None:
    assert render("{{// note}}kept{{///}}").text == "kept{{///}}"


def test_a_scoped_reverse_takes_its_content_as_the_argument() -> None:
    assert render("{{reverse}} abc {{/reverse}}").text == "cba"


# -- if / else -----------------------------------------------------------------------------------


def test_if_renders_the_then_branch_when_the_condition_is_truthy() -> None:
    assert render("{{if yes}}shown{{else}}hidden{{/if}}").text == "shown"


@pytest.mark.parametrize("falsy", ["", "false", "FALSE", " off ", "0", "Off"])
def test_if_renders_the_else_branch_for_each_falsy_value(falsy: str) -> None:
    output = render("{{if {{getvar::flag}}}}then{{else}}else{{/if}}", variables={"flag": falsy})
    assert output.text == "else"


def test_an_if_without_else_renders_nothing_when_false() -> None:
    assert render("[{{if 0}}hidden{{/if}}]").text == "[]"


def test_a_bang_negates_the_condition() -> None:
    assert render("{{if !off}}negated{{/if}}|{{if !on}}x{{else}}y{{/if}}").text == "negated|y"


def test_a_dot_condition_reads_a_local_variable_and_a_dollar_one_a_global() -> None:
    text = "{{if .mood}}local{{/if}}|{{if $mood}}global{{else}}no global{{/if}}"
    assert render(text, variables={"mood": "calm"}).text == "local|no global"


def test_a_known_argumentless_macro_name_is_evaluated_as_the_condition() -> None:
    text = "{{if description}}Has: {{description}}{{else}}none{{/if}}|{{if personality}}P{{else}}no P{{/if}}"
    assert render(text, env=MacroEnv(description="A keeper.")).text == "Has: A keeper.|no P"


def test_a_condition_only_tested_does_not_count_as_an_expansion() -> None:
    output = render("{{if !description}}nothing to say{{/if}}", env=MacroEnv(description="A keeper."))
    assert output.text == ""
    assert output.segments[0].expanded == frozenset()


def test_a_condition_that_is_not_a_macro_name_is_its_own_text() -> None:
    assert render("{{if anything}}yes{{/if}}").text == "yes"


def test_nested_ifs_each_pair_with_their_own_else() -> None:
    text = "{{if .a}}A{{if .b}}B{{else}}notB{{/if}}{{else}}notA{{if .b}}B{{/if}}{{/if}}"
    assert render(text, variables={"a": "1", "b": ""}).text == "AnotB"
    assert render(text, variables={"a": "", "b": "1"}).text == "notAB"


def test_a_write_in_the_branch_not_taken_has_no_effect() -> None:
    text = "{{if .ready}}{{setvar::path::then}}{{incvar::count}}{{else}}{{setvar::path::else}}{{/if}}"
    output = render(text, variables={"ready": "false", "count": 1})
    assert output.variables == {"ready": "false", "count": 1, "path": "else"}


def test_the_chosen_branch_is_dedented_and_trimmed() -> None:
    text = "{{if yes}}\n    # Heading\n    Body\n{{/if}}|"
    assert render(text).text == "# Heading\nBody|"


def test_the_inline_form_takes_its_text_as_the_second_argument() -> None:
    assert render("{{if on::shown}}|{{if off::shown}}|{{if off::a{{else}}b}}").text == "shown||b"


def test_an_if_without_its_closing_tag_is_left_verbatim_with_a_warning() -> None:
    output = render("{{if .x}}dangling")
    assert output.text == "{{if .x}}dangling"
    assert any("{{/if}}" in warning for warning in output.warnings)


def test_a_compiled_if_is_parsed_once_and_renders_differently_per_state() -> None:
    template = compile_text("{{if .x}}on{{else}}off{{/if}}")
    assert template.has_macros
    assert render_nodes(template.source, variables={"x": "1"}).text == "on"
    assert render_nodes(template.source, variables={"x": "0"}).text == "off"


# -- variable shorthand --------------------------------------------------------------------------


def test_shorthand_reads_local_and_global_variables() -> None:
    output = render("{{.hp}}/{{$hp}}", variables={"hp": 7}, global_variables={"hp": "max"})
    assert output.text == "7/max"


def test_assignments_render_nothing_and_store_the_trimmed_value() -> None:
    output = render("[{{.name =  Ann  }}][{{$realm = North}}]")
    assert output.text == "[][]"
    assert output.variables == {"name": "Ann"}
    assert output.global_variables == {"realm": "North"}


def test_plus_and_minus_assignment_change_numbers() -> None:
    output = render("{{.hp += 5}}{{.hp -= 3}}{{.hp}}", variables={"hp": "10"})
    assert output.text == "12"


def test_increment_and_decrement_return_the_new_value() -> None:
    output = render("{{.x++}} {{.x++}} {{.x--}}", variables={"x": 1})
    assert output.text == "2 3 2"
    assert output.variables == {"x": 2}


def test_or_falls_back_when_the_value_is_falsy_and_nullish_only_when_missing() -> None:
    variables = {"zero": "0", "word": "hi"}
    text = "{{.zero || d}} {{.zero ?? d}} {{.word || d}} {{.missing ?? d}}"
    assert render(text, variables=variables).text == "d 0 hi d"


def test_or_assign_and_nullish_assign_store_the_fallback_and_return_it() -> None:
    output = render("{{.a ||= one}} {{.a ||= two}} {{.b ??= three}} {{.b ??= four}}", variables={"a": "off"})
    assert output.text == "one one three three"
    assert output.variables == {"a": "one", "b": "three"}


def test_an_operator_value_is_rendered_only_when_needed() -> None:
    output = render("{{.x || {{setvar::used::yes}}fallback}}", variables={"x": "set"})
    assert output.text == "set"
    assert "used" not in output.variables


def test_equality_compares_as_text() -> None:
    text = "{{.n == 5}} {{.n == 5.0}} {{.n != 5}}"
    assert render(text, variables={"n": "5"}).text == "true false false"


def test_ordering_compares_as_numbers() -> None:
    text = "{{.n > 9}} {{.n >= 10}} {{.n < 2}} {{.n <= 10}}"
    assert render(text, variables={"n": "10"}).text == "true true false true"


def test_a_comparison_with_something_that_is_not_a_number_is_false_and_warned() -> None:
    output = render("{{.name > 3}}|{{.n < abc}}", variables={"name": "Ann", "n": 1})
    assert output.text == "false|false"
    assert len(output.warnings) == 2


def test_the_shorthand_value_may_hold_nested_macros() -> None:
    output = render("{{.copy = {{getvar::source}}!}}{{.copy}}", variables={"source": "hi"})
    assert output.text == "hi!"


def test_a_shorthand_write_in_a_later_node_is_not_seen_by_an_earlier_read() -> None:
    output = render_nodes("Level: [{{.level}}]", "{{.level = 3}}")
    assert output.segments[0].text == "Level: []"
    assert output.variables == {"level": "3"}


# -- the new macros ------------------------------------------------------------------------------


def test_hasvar_and_hasglobalvar_say_whether_the_variable_exists() -> None:
    output = render(
        "{{hasvar::a}} {{hasvar::b}} {{hasglobalvar::g}} {{hasglobalvar::a}}",
        variables={"a": ""},
        global_variables={"g": "1"},
    )
    assert output.text == "true false true false"


def test_reverse_works_by_code_point() -> None:
    assert render("{{reverse::ab😀c}}").text == "c😀ba"


def test_time_with_a_utc_offset_in_both_spellings() -> None:
    env = MacroEnv(now=EVENING, timezone="Europe/Berlin")
    assert render("{{time_UTC+2}}|{{time::UTC-10}}|{{time}}", env=env).text == "10:07 PM|10:07 AM|9:07 PM"


def test_reasoning_prefix_and_suffix_come_from_the_environment() -> None:
    assert render("{{reasoningPrefix}}x{{reasoningSuffix}}").text == "<think>x</think>"
    env = MacroEnv(reasoning_prefix="<thought>", reasoning_suffix="</thought>")
    assert render("{{reasoningPrefix}}x{{reasoningSuffix}}", env=env).text == "<thought>x</thought>"


def test_space_renders_one_space_or_as_many_as_asked() -> None:
    assert render("[{{space}}][{{space::3}}]").text == "[ ][   ]"


def test_char_aliases_read_the_same_text_as_the_macros_they_alias() -> None:
    env = MacroEnv(description="A keeper.", personality="kind")
    output = render("{{charDescription}}|{{charPersonality}}", env=env)
    assert output.text == "A keeper.|kind"
    assert output.segments[0].expanded == {"description", "personality"}


# -- escaped braces ------------------------------------------------------------------------------


def test_escaped_braces_are_never_macro_syntax_and_lose_their_backslash_at_the_end() -> None:
    output = render(r"\{\{getvar::x\}\} and \{{user}} stay, {{getvar::x}} renders", variables={"x": "1"})
    assert output.text == r"\{\{getvar::x\}\} and \{{user}} stay, 1 renders"
    final = resolve_identity(output.text, user="Ann", char="Lantern")
    assert final == "{{getvar::x}} and {{user}} stay, 1 renders"


def test_an_escaped_single_brace_random_is_not_drawn() -> None:
    assert resolve_identity(r"\{random::a::b}", user="Ann", char="L") == "{random::a::b}"


# -- import summary ------------------------------------------------------------------------------


def test_macros_2_forms_are_not_reported_as_unsupported() -> None:
    text = (
        "{{if .x}}a{{else}}b{{/if}} {{#trim}}c{{/trim}} {{.y = 1}} {{$z++}} {{hasvar::x}} {{reverse::t}}"
        " {{time_UTC+1}} {{reasoningPrefix}} {{space}} {{charDescription}} {{//}}d{{///}}"
    )
    assert find_unsupported_macros(text) == frozenset()


def test_unknown_macros_are_still_reported() -> None:
    assert find_unsupported_macros("{{if .x}}{{lumiaDef}}{{/if}} {{charAvatarPath}}") == {
        "lumiadef",
        "charavatarpath",
    }
