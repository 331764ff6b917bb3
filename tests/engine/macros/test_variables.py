"""docs/macros.md#variables: sequential variables, forward reads from pass 1, addvar/incvar types, globals,
paths."""

from __future__ import annotations

import pytest

from .conftest import render, render_nodes


def test_a_later_read_sees_an_earlier_write() -> None:
    assert render("{{setvar::mood::calm}}Mood: {{getvar::mood}}").text == "Mood: calm"


# SillyTavern 1.18 renders a prompt in one pass (docs/assembly.md#what-sillytavern-118-corrected): a read
# before the write is empty. What it shows from a chat's second generation on comes from the variables its
# first one left, which the bot passes back as the document's `variables`.
def test_a_getvar_before_the_setvar_reads_nothing() -> None:
    assert render("Mood: [{{getvar::mood}}]{{setvar::mood::calm}}").text == "Mood: []"


def test_a_read_in_an_earlier_node_does_not_see_a_later_nodes_write() -> None:
    output = render_nodes("Style: [{{getvar::style}}]", "{{setvar::style::narrative}}")
    assert [segment.text for segment in output.segments] == ["Style: []", ""]
    assert output.variables == {"style": "narrative"}


def test_the_variables_a_render_leaves_make_the_next_turns_early_read_see_the_value() -> None:
    first = render_nodes("Style: [{{getvar::style}}]", "{{setvar::style::narrative}}")
    second = render_nodes(
        "Style: [{{getvar::style}}]", "{{setvar::style::narrative}}", variables=first.variables
    )
    assert second.segments[0].text == "Style: [narrative]"


def test_a_variable_reassigned_between_two_reads_gives_each_read_its_current_value() -> None:
    text = "{{setvar::x::a}}{{getvar::x}}{{setvar::x::b}}{{getvar::x}}"
    assert render(text).text == "ab"


def test_an_early_read_then_a_reassigned_read() -> None:
    text = "{{getvar::x}}|{{setvar::x::a}}{{getvar::x}}|{{setvar::x::b}}"
    assert render(text).text == "|a|"


def test_a_key_the_starting_state_has_reads_its_current_value_not_the_forward_one() -> None:
    output = render("{{getvar::x}}{{setvar::x::new}}{{getvar::x}}", variables={"x": "old"})
    assert output.text == "oldnew"
    assert output.variables == {"x": "new"}


def test_a_deleted_variable_reads_empty_after_the_delete() -> None:
    text = "{{setvar::x::a}}{{deletevar::x}}[{{getvar::x}}]"
    output = render(text)
    assert output.text == "[]"
    assert "x" not in output.variables


def test_a_missing_variable_reads_empty() -> None:
    assert render("[{{getvar::nobody}}]").text == "[]"


def test_keys_are_trimmed_and_case_sensitive() -> None:
    output = render("{{setvar:: Hp ::10}}{{getvar::Hp}}/{{getvar::hp}}")
    assert output.text == "10/"
    assert output.variables == {"Hp": "10"}


def test_setvar_stores_the_text() -> None:
    assert render("{{setvar::n::5}}").variables == {"n": "5"}


@pytest.mark.parametrize(
    ("start", "added", "printed", "stored"),
    [
        ("5", "3", "8", 8),
        (1.5, "1", "2.5", 2.5),
        ("0.1", "0.2", "0.30000000000000004", 0.30000000000000004),
        ("10", "-4", "6", 6),
        # SillyTavern 1.18 trims an inline value: " and pears" adds "and pears"
        ("apples", " and pears", "applesand pears", "applesand pears"),
        ("5", "x", "5x", "5x"),
        ('["a"]', "b", '["a","b"]', ["a", "b"]),
        (["a"], "b", '["a","b"]', ["a", "b"]),
    ],
)
def test_addvar_adds_numbers_appends_to_arrays_and_concatenates_text(
    start: object, added: str, printed: str, stored: object
) -> None:
    output = render(f"{{{{addvar::v::{added}}}}}{{{{getvar::v}}}}", variables={"v": start})
    assert output.text == printed
    assert output.variables["v"] == stored


@pytest.mark.parametrize(("added", "stored"), [("3", 3), ("text", "text")])
def test_addvar_on_a_missing_variable_starts_from_nothing(added: str, stored: object) -> None:
    assert render(f"{{{{addvar::v::{added}}}}}").variables == {"v": stored}


@pytest.mark.parametrize(
    ("start", "macro", "printed", "stored"),
    [
        (None, "incvar", "1", 1),
        ("", "incvar", "1", 1),
        ("4", "incvar", "5", 5),
        (2.5, "incvar", "3.5", 3.5),
        (None, "decvar", "-1", -1),
        ("4", "decvar", "3", 3),
    ],
)
def test_incvar_and_decvar_change_a_number_by_one_and_render_it(
    start: object, macro: str, printed: str, stored: object
) -> None:
    variables = {} if start is None else {"n": start}
    output = render(f"{{{{{macro}::n}}}}", variables=variables)
    assert output.text == printed
    assert output.variables["n"] == stored


@pytest.mark.parametrize(
    ("macro", "printed"), [("incvar", "calm1"), ("decvar", "calm-1"), ("incglobalvar", "calm1")]
)
def test_incvar_on_text_appends_the_step_as_text_and_prints_it_as_sillytavern_does(
    macro: str, printed: str
) -> None:
    # SillyTavern 1.18 sent "abc1" for {{incvar}} on "abc" (fidelity case own-vars-text)
    scope = {"global_variables": {"mood": "calm"}} if "global" in macro else {"variables": {"mood": "calm"}}
    output = render(f"[{{{{{macro}::mood}}}}]", **scope)
    assert output.text == f"[{printed}]"
    stored = output.global_variables if "global" in macro else output.variables
    assert stored == {"mood": printed}
    assert not output.warnings


@pytest.mark.parametrize(
    ("start", "addition", "stored"),
    [
        ("0", "tail", "tail"),
        ("5.50", "x", "5.5x"),
        ("", "word", "word"),
        ("  ", "2", 2),
        ("abc", "1", "abc1"),
    ],
)
def test_addvar_reads_the_current_value_as_sillytavern_reads_a_variable(
    start: str, addition: str, stored: object
) -> None:
    # SillyTavern 1.18 sent "[tail]" for {{setvar::z::0}}{{addvar::z::tail}}[{{getvar::z}}]
    output = render(f"{{{{addvar::v::{addition}}}}}", variables={"v": start})
    assert output.text == ""
    assert output.variables["v"] == stored


def test_repeated_incvar_counts_up_in_document_order() -> None:
    assert render("{{incvar::turn}} {{incvar::turn}} {{getvar::turn}}").text == "1 2 2"


@pytest.mark.parametrize("number", ["3", "3.0", "3e0"])
def test_numbers_print_as_javascript_prints_them(number: str) -> None:
    assert render(f"{{{{addvar::n::{number}}}}}{{{{getvar::n}}}}").text == "3"


def test_global_variables_live_in_their_own_namespace() -> None:
    text = "{{setglobalvar::x::g}}{{setvar::x::l}}{{getglobalvar::x}}/{{getvar::x}}"
    output = render(text, global_variables={"other": "kept"})
    assert output.text == "g/l"
    assert output.global_variables == {"other": "kept", "x": "g"}
    assert output.variables == {"x": "l"}


def test_every_global_form_writes_the_global_namespace() -> None:
    text = "{{addglobalvar::a::2}}{{incglobalvar::b}}{{decglobalvar::c}}{{setglobalvar::d::x}}{{deleteglobalvar::d}}"
    output = render(text)
    assert output.global_variables == {"a": 2, "b": 1, "c": -1}
    assert output.variables == {}


def test_an_early_globalvar_read_reads_nothing() -> None:
    assert render("[{{getglobalvar::g}}]{{setglobalvar::g::late}}").text == "[]"


def test_the_output_reports_the_state_after_the_render() -> None:
    output = render("{{incvar::n}}{{getvar::n}}", variables={"n": "1"})
    assert output.variables == {"n": 2}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("npcs.alice.hp", "12"),
        ("npcs.alice", '{"hp":12,"tags":["brave","kind"]}'),
        ("npcs.alice.tags.1", "kind"),
        ("npcs.alice.tags.-1", "kind"),
        ("npcs.bob.hp", ""),
        ("npcs.alice.tags.9", ""),
        (" npcs . alice . hp ", "12"),
    ],
)
def test_getvar_follows_a_dotted_path_into_a_json_value(path: str, expected: str) -> None:
    # a space before the macro's own `}}`: SillyTavern's lexer ends a macro at the first `}}`
    # (docs/fidelity.md#the-deliberate-differences, item 8)
    text = '{{setvar::npcs::{"alice":{"hp":12,"tags":["brave","kind"]} } }}' + f"{{{{getvar::{path}}}}}"
    assert render(text).text == expected


def test_getvar_falls_back_to_the_flat_key_when_the_head_is_not_json() -> None:
    output = render("{{getvar::a.b}}|{{getvar::c.d}}", variables={"a": "plain", "a.b": "flat", "c.d": "also"})
    assert output.text == "flat|also"


def test_getvar_refuses_a_forbidden_path_segment_with_a_warning() -> None:
    output = render("[{{getvar::obj.__proto__}}]", variables={"obj": {"a": 1}})
    assert output.text == "[]"
    assert any("__proto__" in warning for warning in output.warnings)


def test_a_json_value_from_the_starting_state_can_be_walked() -> None:
    assert render("{{getvar::inv.0.name}}", variables={"inv": [{"name": "lamp"}]}).text == "lamp"


def test_the_starting_state_is_not_mutated() -> None:
    start = {"list": ["a"], "n": "1"}
    render("{{addvar::list::b}}{{incvar::n}}", variables=start)
    assert start == {"list": ["a"], "n": "1"}


def test_a_setvar_without_a_key_is_ignored_with_a_warning() -> None:
    output = render("{{setvar::::v}}")
    assert output.variables == {}
    assert output.warnings


def test_setvar_trims_its_value_as_sillytavern_does() -> None:
    # SillyTavern 1.18: "{{setvar::x:: a b }}[{{getvar::x}}]" sends "[a b]"
    assert render("{{setvar::x:: a b }}[{{getvar::x}}]").text == "[a b]"
    assert render("{{setvar::x::\n a \n}}[{{getvar::x}}]").text == "[a]"
