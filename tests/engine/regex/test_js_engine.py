"""The JavaScript regex core: SillyTavern's `findRegex` reading, JavaScript semantics, the time bound."""

from __future__ import annotations

import threading
import time

import pytest

from engine.regex import (
    RegexCompileError,
    RegexTimeout,
    Run,
    compile_js_regex,
    compile_replacement,
    parse_find_regex,
    replace_many,
)


def replace(find_regex: str, text: str, template: str, trims: tuple[str, ...] = ()) -> str:
    return compile_js_regex(*parse_find_regex(find_regex)).replace(text, compile_replacement(template, trims))


@pytest.mark.parametrize(
    ("find_regex", "expected"),
    [
        ("/abc/gi", ("abc", "gi")),
        ("/a/b/gmsu", ("a/b", "gmsu")),
        ("/abc/", ("abc", "")),
        ("abc", ("abc", "")),
        ("/abc/gx", ("/abc/gx", "")),
        ("/abc/gg", ("/abc/gg", "")),
        ("/abc/y", ("/abc/y", "")),
        ("/half", ("/half", "")),
    ],
)
def test_find_regex_is_read_as_sillytavern_reads_it(find_regex, expected):
    assert parse_find_regex(find_regex) == expected


def test_an_unknown_flag_makes_the_whole_string_the_pattern():
    assert replace("/cat/x", "a /cat/x here, a cat there", "dog") == "a dog here, a cat there"


def test_a_bare_pattern_replaces_only_the_first_match_case_sensitively():
    assert replace("cat", "Cat cat cat", "dog") == "Cat dog cat"


def test_the_g_flag_replaces_every_match():
    assert replace("/cat/g", "cat cat", "dog") == "dog dog"


def test_the_i_flag_ignores_case():
    assert replace("/cat/gi", "CAT Cat", "dog") == "dog dog"


def test_the_m_flag_anchors_at_each_line():
    assert replace("/^x$/gm", "x\ny\nx", "-") == "-\ny\n-"


def test_without_m_the_dollar_anchors_only_at_the_very_end_as_in_javascript():
    # Python's `$` would also match before a final newline; JavaScript's does not.
    assert replace("/x$/", "x\n", "-") == "x\n"


def test_the_s_flag_lets_the_dot_cross_newlines():
    assert replace("/<think>.*<\\/think>/s", "<think>a\nb</think>hi", "") == "hi"
    assert replace("/<think>.*<\\/think>/", "<think>a\nb</think>hi", "") == "<think>a\nb</think>hi"


def test_the_u_flag_treats_an_astral_character_as_one():
    assert replace("/^.$/u", "😀", "x") == "x"
    assert replace("/^.$/", "😀", "x") == "😀"


def test_w_is_ascii_only_as_in_javascript():
    assert replace("/\\w+/g", "héllo", "W") == "WéW"


def test_variable_width_lookbehind_works():
    assert replace("/(?<=<b\\s*>)x/g", "<b  >x <b>x x", "y") == "<b  >y <b>y x"


def test_numbered_and_named_groups_are_inserted_and_missing_ones_are_empty():
    assert (
        replace("/(\\w+)@(?<host>\\w+)/", "ann@home", "$<host>/$1[$2][$9][$<nope>]") == "home/ann[home][][]"
    )


def test_dollar_ampersand_and_other_javascript_forms_stay_literal():
    assert replace("/b/", "abc", "[$&|$$|$`|$']") == "a[$&|$$|$`|$']c"


def test_match_macro_inserts_the_whole_match():
    assert replace("/b+/", "abbc", "<{{match}}>") == "a<bb>c"


def test_trim_strings_are_removed_from_inserted_values_only():
    assert replace("/\\[(.*)\\]/", "[**bold**]", "**$1**", ("**",)) == "**bold**"


def test_a_rejected_pattern_raises_a_one_sentence_error():
    with pytest.raises(RegexCompileError) as caught:
        compile_js_regex("(?<name", "")
    assert caught.value.message.startswith("Not a valid JavaScript regular expression")


def test_a_catastrophic_pattern_is_stopped_within_the_bound():
    catastrophic = compile_js_regex("(a+)+$", "")
    started = time.perf_counter()
    with pytest.raises(RegexTimeout):
        catastrophic.search("a" * 60 + "b")
    assert time.perf_counter() - started < 1.0


def test_a_batch_reports_the_stopped_script_and_keeps_the_others():
    catastrophic = Run(compile_js_regex("(a+)+$", ""), compile_replacement("Z"), (0, 1))
    tidy = Run(compile_js_regex("x", "g"), compile_replacement("y"), (0, 1))
    result = replace_many(["a" * 60 + "bx", "xx"], [catastrophic, tidy])
    assert result.texts == ["a" * 60 + "by", "yy"]
    assert set(result.failures) == {0}
    assert result.changed_by == {0: [1], 1: [1]}


def test_spans_are_python_indices_even_after_astral_characters():
    assert compile_js_regex("b", "g").spans("😀b😀b") == [(1, 2), (3, 4)]
    assert compile_js_regex("b", "").spans("😀b😀b") == [(1, 2)]


def test_a_compiled_regex_works_from_another_thread():
    regex = compile_js_regex("(?<=a)b", "")
    seen: list[bool] = []
    worker = threading.Thread(target=lambda: seen.append(regex.search("ab")))
    worker.start()
    worker.join()
    assert seen == [True]


def test_a_leading_lazy_wildcard_finishes_on_a_long_text_with_the_same_result():
    # `(.*?</think>)` tries every start against the rest of the text: quadratic in a plain search.
    text = "plan</think>" + "reply text " * 2000
    regex = compile_js_regex("(.*?</think>)|(<think>[\\s\\S]*</think>)", "gs")
    assert regex.replace(text, compile_replacement("")) == "reply text " * 2000
    assert regex.replace("no tags here " * 100, compile_replacement("")) == "no tags here " * 100


def test_matches_found_by_their_literal_start_are_the_same_as_a_plain_search():
    text = "a <b>one</b> and <b>two</b> and <b>unclosed"
    regex = compile_js_regex("<b>([^<]*)</b>", "g")
    assert regex.prefix == "<b>"
    assert regex.replace(text, compile_replacement("[$1]")) == "a [one] and [two] and <b>unclosed"
    assert compile_js_regex("<b>([^<]*)</b>", "").replace(text, compile_replacement("[$1]")) == (
        "a [one] and <b>two</b> and <b>unclosed"
    )


def test_a_case_insensitive_pattern_is_not_skipped_for_a_differently_cased_text():
    assert compile_js_regex("KELVIN", "i").search("kelvin")
    assert compile_js_regex("straße", "i").search("STRASSE") is False  # JavaScript does not fold ß to ss
    assert compile_js_regex("hello world", "i").search("HELLO WORLD")


@pytest.mark.parametrize(
    ("pattern", "flags", "text"),
    [
        ("(?:abc|xyz)def", "", "xyzdef"),
        ("ab+cde", "", "abbbcde"),
        ("a(?=bcd)bcdx", "", "abcdx"),
        ("[Tt]he cat", "", "The cat"),
        ("KITTEN", "i", "kitten"),
        ("fooo?bar", "", "foobar"),
        ("x{2,}yzw", "", "xxxyzw"),
        ("\\d+ apples", "", "12 apples"),
        ("(?<name>abc)\\k<name>def", "", "abcabcdef"),
    ],
)
def test_the_literal_shortcut_never_hides_a_real_match(pattern, flags, text):
    regex = compile_js_regex(pattern, flags)
    assert regex.may_match(text)
    assert regex.search(text)
