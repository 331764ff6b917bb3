"""Properties over arbitrary text: no exception, determinism, plain text unchanged."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.macros import compile_text, find_unsupported_macros, resolve_identity
from tests.engine.fuzzing import examples

from .conftest import render

FRAGMENTS = [
    "{{", "}}", "{", "}", "::", ":", ",", "\\,", "\n", " ", "//", "setvar", "getvar", "addvar", "incvar",
    "decvar", "deletevar", "setglobalvar", "random", "pick", "roll", "1d6", "d20+3", "trim", "each",
    "/each", "loop_value", "loop_key", "user", "char", "<USER>", "x", "x.y", "[1,2]", '{"a":1}', "é", "datetimeformat",
    "YYYY", "description", "newline", "noop", "idle_duration", "time",
]  # fmt: skip

macro_soup = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=40).map("".join)
no_braces = st.text(max_size=200).filter(lambda text: "{" not in text)


@settings(max_examples=examples(400), deadline=None)
@given(macro_soup, st.integers(min_value=0, max_value=2**32))
def test_any_text_renders_without_an_exception(text: str, seed: int) -> None:
    output = render(text, seed=seed)
    assert isinstance(output.text, str)
    find_unsupported_macros(text)
    resolve_identity(output.text, user="Ann", char="Bo", seed=seed)


@settings(max_examples=examples(200), deadline=None)
@given(macro_soup, st.integers(min_value=0, max_value=2**32))
def test_the_same_seed_gives_the_same_output(text: str, seed: int) -> None:
    first, second = render(text, seed=seed), render(text, seed=seed)
    assert first.text == second.text
    assert first.variables == second.variables
    assert first.warnings == second.warnings


@settings(max_examples=examples(200), deadline=None)
@given(no_braces)
def test_text_without_macro_syntax_passes_through_unchanged(text: str) -> None:
    assert render(text).text == text
    assert not compile_text(text).has_macros


@settings(max_examples=examples(200), deadline=None)
@given(no_braces.filter(lambda text: re.search(r"<(user|bot|char)>", text, re.IGNORECASE) is None))
def test_resolve_identity_leaves_text_without_macros_unchanged(text: str) -> None:
    assert resolve_identity(text, user="Ann", char="Bo") == text


IDENTITY_FRAGMENTS = [
    "{{user}}", "{{char}}", "{{ User }}", "{{CHAR}}", "{{bot}}", "{{group}}", "{{charIfNotGroup}}",
    "<USER>", "<BOT>", "<user>", "<Char>", "<bots>", "{{", "}}", "{", "}", "{{notamacro}}", "x", " ", "\n", "é",
]  # fmt: skip
identity_soup = st.lists(st.sampled_from(IDENTITY_FRAGMENTS) | st.text(max_size=2), max_size=30).map("".join)
display_name = st.lists(
    st.sampled_from(["Ann", "{{user}}", "{{char}}", "<USER>", "{", "}", "é"]), max_size=3
).map("".join)
_FORM = re.compile(r"\{\{\s*(user|char|bot|group|charifnotgroup)\s*\}\}|<(user|bot|char)>", re.IGNORECASE)


@settings(max_examples=examples(400), deadline=None)
@given(
    identity_soup.filter(lambda text: "\\" not in text and "random" not in text.lower()),
    display_name,
    display_name,
)
def test_each_identity_form_becomes_its_name_once_and_the_names_are_never_read_again(
    text: str, user: str, char: str
) -> None:
    def name(match: re.Match[str]) -> str:
        # angle forms in any case (docs/assembly.md#what-sillytavern-118-corrected)
        form = match.group(1) or match.group(2)
        return user if form.lower() == "user" else char

    expected = _FORM.sub(name, text)
    assert resolve_identity(text, user=user, char=char) == expected
    assert resolve_identity(text, user=user, char=char) == expected  # the kept cut gives the same
