"""resolve_identity: the last step, names for the deferred macros and the single-brace random forms."""

from __future__ import annotations

import pytest

from engine.macros import resolve_identity

from .conftest import render


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{user}} greets {{char}}", "Alice greets Lantern"),
        ("{{USER}} / {{ Char }} / {{bot}}", "Alice / Lantern / Lantern"),
        ("{{group}} and {{charIfNotGroup}}", "Lantern and Lantern"),
        ("<USER> meets <BOT>", "Alice meets Lantern"),
        # SillyTavern 1.18 reads the angle forms in any case, <CHAR> too
        # (docs/assembly.md#what-sillytavern-118-corrected)
        ("<user> greets <bot>, <Char> nods", "Alice greets Lantern, Lantern nods"),
        ("<users> and <botany> stay", "<users> and <botany> stay"),
    ],
)
def test_identity_macros_become_the_display_names(text: str, expected: str) -> None:
    assert resolve_identity(text, user="Alice", char="Lantern") == expected


def test_text_without_macros_passes_through_unchanged() -> None:
    text = "Plain words, no braces or angle tags."
    assert resolve_identity(text, user="Alice", char="Lantern") is text


@pytest.mark.parametrize("text", ["{random::a::b}", "{random: a, b}", "{RANDOM:a,b}"])
def test_single_brace_random_forms_are_replaced_by_one_item(text: str) -> None:
    results = {resolve_identity(text, user="A", char="B", seed=seed) for seed in range(30)}
    assert results == {"a", "b"}


def test_a_single_brace_random_may_hold_an_identity_macro() -> None:
    results = {
        resolve_identity("{random::hi {{user}}::bye {{user}}}", user="Ann", char="B", seed=s)
        for s in range(30)
    }
    assert results == {"hi Ann", "bye Ann"}


def test_braces_that_are_not_a_random_form_are_kept() -> None:
    text = '{randomFileName} {"json": 1} {{unknown}}'
    assert resolve_identity(text, user="A", char="B") == text


def test_the_engine_output_then_resolve_identity_gives_the_final_text() -> None:
    rendered = render("{{setvar::greet::Hello {{user}}}}{{getvar::greet}}, I am {{char}}.").text
    assert resolve_identity(rendered, user="Ann", char="Lantern") == "Hello Ann, I am Lantern."


def test_names_containing_macro_syntax_are_not_expanded_again() -> None:
    assert resolve_identity("{{user}}", user="{{char}}", char="Bot") == "{{char}}"
    assert resolve_identity("<USER>", user="{random::a::b}", char="Bot") == "{random::a::b}"
