"""docs/macros.md#limits: every limit trips with a warning and leaves the construct verbatim, never a hang."""

from __future__ import annotations

from engine.macros import compile_text
from engine.macros.nodes import MAX_NESTING
from engine.macros.render import MAX_EACH_ITERATIONS, MAX_EVALUATIONS

from .conftest import render


def nested(depth: int) -> str:
    return "{{getvar::" * depth + "x" + "}}" * depth


def test_nesting_up_to_the_limit_is_evaluated() -> None:
    output = render(nested(MAX_NESTING))
    assert output.text == ""
    assert not output.warnings


def test_nesting_past_the_limit_is_left_verbatim_with_a_warning() -> None:
    inner = nested(MAX_NESTING + 8)
    output = render(inner)
    assert "{{getvar::" in output.text
    assert any("nested deeper" in warning for warning in output.warnings)


def test_very_deep_nesting_does_not_crash() -> None:
    output = render(nested(5000))
    assert output.warnings


def test_an_each_over_more_than_the_iteration_limit_is_left_verbatim_with_a_warning() -> None:
    text = "{{each::xs}}{{loop_value}}{{/each}}"
    output = render(text, variables={"xs": list(range(MAX_EACH_ITERATIONS + 1))})
    assert output.text == text
    assert any("iteration limit" in warning for warning in output.warnings)


def test_an_each_at_the_iteration_limit_runs() -> None:
    output = render("{{each::xs}}.{{/each}}", variables={"xs": list(range(MAX_EACH_ITERATIONS))})
    assert output.text == "." * MAX_EACH_ITERATIONS


def test_nested_loops_that_would_run_a_million_times_stop_at_the_evaluation_budget() -> None:
    text = "{{each::xs}}{{each::xs}}{{noop}}{{/each}}{{/each}}"
    output = render(text, variables={"xs": list(range(1000))})
    assert any(str(MAX_EVALUATIONS) in warning for warning in output.warnings)


def test_a_loop_producing_more_than_a_mebibyte_is_left_verbatim_with_a_warning() -> None:
    text = "{{each::xs}}{{getvar::big}}{{/each}}"
    output = render(text, variables={"xs": list(range(600)), "big": "x" * 4096})
    assert output.text == text
    assert any("1 MiB" in warning for warning in output.warnings)


def test_a_node_rendering_to_more_than_a_mebibyte_is_left_verbatim_with_a_warning() -> None:
    text = "{{getvar::big}}{{getvar::big}}"
    output = render(text, variables={"big": "x" * 600_000})
    assert output.text == text
    assert any("1 MiB" in warning for warning in output.warnings)


def test_a_node_text_longer_than_a_mebibyte_is_not_parsed() -> None:
    text = "{{user}}" + "x" * (1024 * 1024)
    compiled = compile_text(text)
    assert not compiled.has_macros
    output = render(text)
    assert output.text == text
    assert any("1 MiB" in warning for warning in output.warnings)


def test_loops_nested_past_the_limit_are_left_verbatim_with_a_warning() -> None:
    depth = MAX_NESTING + 2
    text = "{{each::[1]}}" * depth + "x" + "{{/each}}" * depth
    output = render(text)
    assert "{{each::[1]}}" in output.text
    assert any("nested deeper" in warning for warning in output.warnings)


def test_many_reads_of_a_large_value_stop_at_the_size_limit_without_building_it() -> None:
    text = "{{getvar::big}}" * 5000
    output = render(text, variables={"big": "x" * 500_000})
    assert output.text == text
    assert any("1 MiB" in warning for warning in output.warnings)


def test_a_variable_doubling_itself_stops_at_the_size_limit() -> None:
    text = "{{setvar::a::x}}" + "{{setvar::a::{{getvar::a}}{{getvar::a}}}}" * 40 + "{{getvar::a}}"
    output = render(text)
    assert len(output.variables["a"]) <= 1024 * 1024
    assert any("1 MiB" in warning for warning in output.warnings)


def test_an_array_growing_past_the_size_limit_stops_growing() -> None:
    text = "{{each::xs}}{{addvar::list::{{getvar::chunk}}}}{{/each}}"
    output = render(text, variables={"xs": list(range(300)), "chunk": "x" * 10_000, "list": []})
    assert 100 <= len(output.variables["list"]) <= 105
    assert any("1 MiB" in warning for warning in output.warnings)


def test_tens_of_thousands_of_unclosed_macros_stay_literal() -> None:
    for text in ("{{a " * 50_000, "{random:" * 50_000, "{{each::[1]}}" * 20_000):
        output = render(text)
        assert output.text == text
