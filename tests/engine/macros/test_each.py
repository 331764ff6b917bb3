"""`{{each}}` loops: objects and arrays, paths, nesting with shadowing, what counts as a collection."""

from __future__ import annotations

import pytest

from .conftest import render


def test_each_over_an_array_gives_indexes_and_elements() -> None:
    output = render("{{each::xs}}{{loop_key}}={{loop_value}};{{/each}}", variables={"xs": ["a", "b"]})
    assert output.text == "0=a;1=b;"


def test_each_over_an_object_gives_keys_and_values() -> None:
    output = render(
        "{{each::hp}}{{loop_key}}:{{loop_value}} {{/each}}", variables={"hp": {"ann": 3, "bo": 4.5}}
    )
    assert output.text == "ann:3 bo:4.5 "


def test_each_over_a_variable_holding_json_text() -> None:
    text = '{{setvar::xs::["x","y"]}}{{each::xs}}{{loop_value}}{{/each}}'
    assert render(text).text == "xy"


@pytest.mark.parametrize(
    ("collection", "expected"),
    [("[1,2,3]", "123"), ('{"a":1,"b":2} ', "12"), ("{{getvar::xs}}", "pq")],
)
def test_each_takes_an_inline_json_literal_or_a_nested_macro(collection: str, expected: str) -> None:
    text = f"{{{{each::{collection}}}}}{{{{loop_value}}}}{{{{/each}}}}"
    assert render(text, variables={"xs": '["p","q"]'}).text == expected


def test_loop_value_with_a_path_reads_inside_the_element() -> None:
    npcs = [{"name": "Ann", "stats": {"hp": 3}}, {"name": "Bo", "stats": {"hp": 5}}]
    text = "{{each::npcs}}{{loop_value::name}}({{loop_value::stats.hp}}) {{/each}}"
    assert render(text, variables={"npcs": npcs}).text == "Ann(3) Bo(5) "


def test_nested_loops_shadow_and_the_outer_values_return_after_the_inner_loop() -> None:
    text = "{{each::outer}}[{{loop_key}}:{{each::inner}}{{loop_key}}{{loop_value}}{{/each}}:{{loop_value}}]{{/each}}"
    output = render(text, variables={"outer": {"o": "O"}, "inner": ["i", "j"]})
    assert output.text == "[o:0i1j:O]"


@pytest.mark.parametrize("variables", [{}, {"xs": []}, {"xs": {}}, {"xs": "plain"}, {"xs": 5}, {"xs": ""}])
def test_a_missing_empty_or_non_collection_value_iterates_zero_times(variables: dict) -> None:
    assert render("a{{each::xs}}never{{/each}}b", variables=variables).text == "ab"


def test_loop_macros_outside_a_loop_stay_verbatim_and_are_not_reported() -> None:
    output = render("{{loop_key}} {{loop_value}} {{loop_value::a}}")
    assert output.text == "{{loop_key}} {{loop_value}} {{loop_value::a}}"
    assert not output.unknown_macros


def test_writes_inside_a_loop_happen_once_per_iteration() -> None:
    assert render("{{each::[1,2,3]}}{{incvar::n}}{{/each}}|{{getvar::n}}").text == "123|3"


def test_an_each_without_its_end_is_left_verbatim_with_a_warning() -> None:
    output = render("{{each::xs}}{{loop_value}}", variables={"xs": ["a"]})
    assert output.text == "{{each::xs}}{{loop_value}}"
    assert output.warnings


def test_an_end_without_each_is_left_verbatim_with_a_warning() -> None:
    output = render("x{{/each}}")
    assert output.text == "x{{/each}}"
    assert output.warnings
