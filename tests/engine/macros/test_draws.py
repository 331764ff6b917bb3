"""random, pick and roll: every form, seeding, caps and invalid forms."""

from __future__ import annotations

import re

import pytest

from engine.macros import MacroEnv

from .conftest import render, render_nodes


def outcomes(text: str, seeds: range = range(40), **options: object) -> set[str]:
    return {render(text, seed=seed, **options).text for seed in seeds}


@pytest.mark.parametrize(
    "text",
    [
        "{{random:a,b,c}}",
        "{{random::a::b::c}}",
        "{{random a,b,c}}",
        "{{random: a, b , c }}",
        "{{RANDOM::a,b,c}}",
        "{random::a::b::c}",
        "{random: a, b, c}",
    ],
)
def test_every_random_form_draws_one_trimmed_item(text: str) -> None:
    assert outcomes(text) == {"a", "b", "c"}


def test_random_splits_on_double_colons_before_commas() -> None:
    assert outcomes("{{random::a, b::c, d}}") == {"a, b", "c, d"}


def test_random_keeps_an_escaped_comma_inside_an_item() -> None:
    assert outcomes("{{random:one\\, two,three}}") == {"one, two", "three"}


def test_random_items_may_hold_nested_macros() -> None:
    assert outcomes("{{random::{{getvar::a}}::{{getvar::b}}}}", variables={"a": "A", "b": "B"}) == {"A", "B"}


def test_the_same_seed_draws_the_same_values() -> None:
    text = "{{random::a::b::c::d}} {{roll:3d6}} {{random::a::b::c::d}}"
    assert render(text, seed=99).text == render(text, seed=99).text


def test_two_randoms_in_one_text_draw_independently() -> None:
    texts = outcomes("{{random::a::b}}{{random::a::b}}", seeds=range(60))
    assert texts == {"aa", "ab", "ba", "bb"}


def test_a_drawn_value_stored_in_a_variable_reads_back_the_same() -> None:
    output = render_nodes("{{setvar::r::{{roll:1d1000}}-{{random::a::b::c::d}}}}", "{{getvar::r}}", seed=5)
    assert output.segments[1].text == output.variables["r"]


def test_pick_is_stable_across_renders_and_seeds() -> None:
    env = MacroEnv(server_id=1001)
    assert len(outcomes("{{pick::a::b::c::d::e::f}}", env=env)) == 1


def test_pick_depends_on_the_server() -> None:
    picks = {
        render("{{pick::a::b::c::d::e::f}}", env=MacroEnv(server_id=server)).text for server in range(30)
    }
    assert len(picks) > 1


def test_pick_depends_on_its_position_in_the_node() -> None:
    text = " ".join(["{{pick::a::b::c::d::e::f}}"] * 12)
    assert len(set(render(text, env=MacroEnv(server_id=1001)).text.split())) > 1


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("{{roll:1d6}}", 1, 6),
        ("{{roll::2d6}}", 2, 12),
        ("{{roll 1d6}}", 1, 6),
        ("{{roll:d3+2}}", 3, 5),
        ("{{roll:3d30+120}}", 123, 210),
        ("{{roll:1d4-1}}", 0, 3),
        ("{{roll:20}}", 1, 20),
        ("{{roll: 2d4 + 6 }}", 8, 14),
        ("{{ROLL:1D4}}", 1, 4),
    ],
)
def test_every_roll_form_sums_the_dice_within_range(text: str, low: int, high: int) -> None:
    values = {int(value) for value in outcomes(text, seeds=range(200))}
    assert min(values) >= low and max(values) <= high
    assert len(values) > 1


def test_a_roll_of_more_than_a_thousand_sides_is_clamped_and_warned() -> None:
    output = render("{{roll 1d999999}}", seed=1)
    values = {int(render("{{roll 1d999999}}", seed=seed).text) for seed in range(100)}
    assert max(values) <= 1000
    assert any("1000" in warning for warning in output.warnings)


def test_a_roll_of_more_than_a_hundred_dice_is_clamped_and_warned() -> None:
    output = render("{{roll:500d1}}")
    assert output.text == "100"
    assert any("100 dice" in warning for warning in output.warnings)


@pytest.mark.parametrize("formula", ["abc", "0d6", "1d0", "", "2d", "1d6+", "d", "-3"])
def test_an_invalid_roll_renders_nothing_and_warns(formula: str) -> None:
    output = render(f"[{{{{roll:{formula}}}}}]")
    assert output.text == "[]"
    assert any("roll" in warning for warning in output.warnings)


def test_a_roll_result_is_a_plain_integer() -> None:
    assert re.fullmatch(r"\d+", render("{{roll:2d6+1}}", seed=3).text)


def test_a_warning_from_a_preset_node_names_the_node() -> None:
    output = render_nodes("fine", "{{roll:1d20+mod}}")
    assert output.warnings == (
        "In \"node1\": The roll '1d20+mod' is not a dice formula such as 2d6+1; it rendered as nothing.",
    )


@pytest.mark.parametrize(
    "text", ["{{pick:a,b,c}}", "{{pick::a::b::c}}", "{{pick a,b,c}}", "{{PICK: a, b , c }}"]
)
def test_every_pick_form_picks_one_trimmed_item_the_same_on_every_render(text: str) -> None:
    by_server = {render(text, env=MacroEnv(server_id=server)).text for server in range(40)}
    assert by_server == {"a", "b", "c"}
    assert len(outcomes(text, env=MacroEnv(server_id=7))) == 1
