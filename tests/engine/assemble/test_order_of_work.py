"""The order of work docs/assembly.md#order-of-work gives is the order the assembler runs, and each
step writes only its own group of the state's fields (and what it amends), after the steps whose
groups it reads."""

from __future__ import annotations

import ast
import inspect
import re
import sys
from dataclasses import fields
from pathlib import Path

from engine.assemble import STEPS
from engine.assemble import state as state_module
from engine.assemble.pipeline import Step
from engine.assemble.state import AMENDS, GIVEN, MAKES, State

PAGE = Path(__file__).resolve().parents[3] / "docs" / "assembly.md"


def documented_steps() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## Order of work\n", 1)[1].split("\n## ", 1)[0]
    return [m.group(1).lower() for m in re.finditer(r"^\d+\. \*\*([^*]+)\*\*", section, re.MULTILINE)]


def test_the_page_lists_every_step_of_the_assembler_in_the_order_it_runs():
    assert documented_steps() == [step.name for step in STEPS]


def test_the_steps_have_distinct_names():
    names = [step.name for step in STEPS]
    assert len(set(names)) == len(names)


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


_METHODS = {
    node.name: node
    for cls in ast.parse(inspect.getsource(state_module)).body
    if isinstance(cls, ast.ClassDef) and cls.name == "State"
    for node in cls.body
    if isinstance(node, ast.FunctionDef)
}


def state_access(tree: ast.Module, name: str) -> tuple[set[str], set[str]]:
    """The State fields the function `name` of a module assigns and reads, through the module's own
    functions it calls and the State methods it calls."""
    table, assigned, read, seen = _functions(tree), set[str](), set[str](), set[str]()
    pending = [table[name]]
    while pending:
        function = pending.pop()
        if function.name in seen:
            continue
        seen.add(function.name)
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("state", "self")
            ):
                if node.attr in _METHODS:
                    pending.append(_METHODS[node.attr])
                else:
                    (assigned if isinstance(node.ctx, ast.Store) else read).add(node.attr)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in table:
                pending.append(table[node.func.id])
    return assigned, read


def _step_access(step: Step) -> tuple[set[str], set[str]]:
    module = sys.modules[step.run.__module__]
    return state_access(ast.parse(inspect.getsource(module)), step.run.__name__)


def test_every_field_of_the_state_is_given_or_made_by_one_step():
    groups = [GIVEN, *MAKES.values()]
    assert set(MAKES) <= {step.name for step in STEPS} and set(AMENDS) <= {step.name for step in STEPS}
    assert sum(map(len, groups)) == len(frozenset().union(*groups))  # no field in two groups
    assert frozenset().union(*groups) == {f.name for f in fields(State)}


def test_the_state_lists_its_fields_group_by_group_in_the_order_of_work():
    order = [step.name for step in STEPS]
    rank = {name: 0 for name in GIVEN} | {
        name: 1 + order.index(step) for step, group in MAKES.items() for name in group
    }
    ranks = [rank[f.name] for f in fields(State)]
    assert ranks == sorted(ranks)


def test_each_step_assigns_only_its_own_group_and_what_it_amends():
    for step in STEPS:
        assigned, _read = _step_access(step)
        allowed = MAKES.get(step.name, frozenset()) | AMENDS.get(step.name, frozenset())
        assert assigned <= allowed, (step.name, assigned - allowed)


def test_amends_are_of_earlier_groups():
    made_before: set[str] = set(GIVEN)
    for step in STEPS:
        assert AMENDS.get(step.name, frozenset()) <= made_before, step.name
        made_before |= MAKES.get(step.name, frozenset())


def test_every_step_reads_only_fields_made_before_it_or_by_itself():
    made_before: set[str] = set(GIVEN)
    for step in STEPS:
        made_before |= MAKES.get(step.name, frozenset())
        _assigned, read = _step_access(step)
        assert read <= made_before, (step.name, read - made_before)


PLANTED = """
def budget(state):
    state.tokens = _count(state)

def _count(state):
    state.payload = None
    return len(state.ordered)
"""


def test_the_check_flags_a_step_that_assigns_another_steps_field():
    assigned, read = state_access(ast.parse(PLANTED), "budget")
    assert assigned == {"tokens", "payload"} and read == {"ordered"}
    allowed = MAKES.get("budget", frozenset()) | AMENDS.get("budget", frozenset())
    assert not assigned <= allowed
