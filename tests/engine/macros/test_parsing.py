"""One left-to-right parser: nesting, braces inside values and comments, unknown and deferred macros."""

from __future__ import annotations

import pickle

import pytest

from engine.macros import compile_text, find_unsupported_macros

from .conftest import render


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{setvar::x::{{user}}}}[{{getvar::x}}]", "[{{user}}]"),
        ("{{setvar::a::b}}{{setvar::name::a}}{{getvar::{{getvar::name}}}}", "b"),
        # SillyTavern 1.18's lexer: the first `}}` closes the macro, braces of a JSON value included
        ('{{setvar::x::{"a":{"b":1}}}}<{{getvar::x}}>', '}}<{"a":{"b":1>'),
        ('{{setvar::x::{"k":"a}}b"}}}[{{getvar::x}}]', 'b"}}}[{"k":"a]'),
        ('{{setvar::x::{"a":{"b":1} } }}<{{getvar::x}}>', '<{"a":{"b":1} }>'),
        ("{{setvar::x::a}}}}", "}}"),
        # three arguments where setvar takes two: SillyTavern 1.18 sends it as written and sets nothing
        ("{{setvar::x::one::two}}{{getvar::x}}", "{{setvar::x::one::two}}"),
        ("{{SetVar::x::v}}{{GETVAR::x}}", "v"),
        ("{{setvar:: spaced key ::v}}{{getvar::spaced key}}", "v"),
    ],
)
def test_nested_macros_and_braces_in_values_leave_no_stray_braces(text: str, expected: str) -> None:
    assert render(text).text == expected


@pytest.mark.parametrize(
    "comment",
    [
        "{{// plain note}}",
        "{{// a closing } brace}}",
        "{{// an unbalanced { brace }}",
        "{{//no space}}",
        "{{ // @tooltip indented }}",
    ],
)
def test_a_comment_renders_nothing_whatever_braces_it_holds(comment: str) -> None:
    assert render(f"a{comment}b").text == "ab"


def test_macros_inside_a_comment_are_still_evaluated_silently() -> None:
    assert render("{{// {{incvar::x}} }}{{// {{incvar::x}} }}{{getvar::x}}").text == "2"


def test_an_unknown_macro_is_left_verbatim_and_reported() -> None:
    output = render("Hi {{wiBefore}} and {{foo::bar}}")
    assert output.text == "Hi {{wiBefore}} and {{foo::bar}}"
    assert output.unknown_macros == {"wibefore", "foo"}


def test_macros_inside_an_unknown_macro_are_evaluated() -> None:
    assert render("{{setvar::x::7}}{{foo::{{getvar::x}}}}").text == "{{foo::7}}"


def test_find_unsupported_macros_names_what_the_engine_does_not_know() -> None:
    text = (
        "{{user}} {{setvar::a::1}} {{#if x}}y{{/if}} {{exampleStart}} {{// note}} {{random::a::b}} {{/foo}}"
    )
    assert find_unsupported_macros(text) == {"examplestart", "/foo"}


@pytest.mark.parametrize(
    ("text", "read_as"),
    [
        ("{{random@::x::x}}", "x"),
        ("{{newline,more}}", "\n"),
        ("{{user's}}", "{{user}}"),
        ("{{char@}}", "{{char}}"),
    ],
)
def test_stray_characters_after_a_macro_name_are_skipped_as_sillytavern_does(text: str, read_as: str) -> None:
    # SillyTavern 1.18's lexer ends a name at the first character a name cannot hold and skips what
    # follows up to a space, a colon, a pipe or the braces (fidelity case own-macro-stray-characters)
    assert render(f"[{text}]").text == f"[{read_as}]"


@pytest.mark.parametrize(
    "text", ["{{user}}", "{{ Char }}", "{{bot}}", "{{group}}", "{{charIfNotGroup}}", "<USER>", "<BOT>"]
)
def test_deferred_identity_macros_are_left_in_place_for_the_end(text: str) -> None:
    output = render(f"[{text}]")
    assert output.text == f"[{text}]"
    assert not output.unknown_macros


@pytest.mark.parametrize(
    "text",
    ["{{", "}}", "a {{ b", "{{unclosed {{user}}", "}}{{", "{{{{}}}}", "{ { } }", "{{}}", "{{ }}"],
)
def test_malformed_braces_stay_as_literal_text(text: str) -> None:
    assert render(text).text == text


def test_triple_braces_keep_the_outer_brace_as_text() -> None:
    assert render("{{{user}}}").text == "{{{user}}}"
    assert render("{{{newline}}}").text == "{\n}"


def test_a_compiled_text_survives_pickling_for_the_cache() -> None:
    compiled = compile_text("{{each::xs}}{{loop_value}}{{/each}}{{setvar::a::{{roll:1d6}}}}")
    assert pickle.loads(pickle.dumps(compiled)) == compiled


def test_a_compiled_text_lists_the_macro_names_it_uses() -> None:
    compiled = compile_text("{{Setvar::a::{{ROLL:1d6}}}} {{// c}} {random::x::y}")
    assert compiled.macro_names == {"setvar", "roll", "//", "random"}
    assert compiled.has_macros


def test_text_without_braces_compiles_to_itself() -> None:
    compiled = compile_text("plain text <b>bold</b>")
    assert not compiled.has_macros
    assert compiled.parts == ("plain text <b>bold</b>",)


@pytest.mark.parametrize(
    ("text", "comment_only"),
    [("{{// title}}", True), ("{{// a}}\n{{trim}}\n", True), ("{{// a}} text", False), ("text", False)],
)
def test_comment_only_texts_are_recognised(text: str, comment_only: bool) -> None:
    assert compile_text(text).is_comment_only is comment_only


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\n{{trim}}\nb", "ab"),
        ("a\n\n\n{{trim}}\n\nb", "ab"),
        ("a \n{{trim}} b", "a  b"),
        ("a\r\n{{trim}}\r\nb", "ab"),
        ("{{// heading}}\n{{trim}}\nbody", "body"),
        ("{{TRIM}}", ""),
    ],
)
def test_trim_removes_itself_and_the_newlines_next_to_it(text: str, expected: str) -> None:
    assert render(text).text == expected


@pytest.mark.parametrize(("text", "expected"), [("a{{newline}}b", "a\nb"), ("a{{noop}}b", "ab")])
def test_newline_and_noop(text: str, expected: str) -> None:
    assert render(text).text == expected


def test_a_comment_ends_at_its_first_closing_pair_as_in_sillytavern() -> None:
    # SillyTavern 1.18 sends ' and {{nested}} }}X' for this text: the comment closes at the first `}}`
    assert render('{{// {json: {"a": 1}} and {{nested}} }}X').text == " and {{nested}} }}X"
