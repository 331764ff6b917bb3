"""The assembly's state starts from the defaults its fields declare (engine/assemble/state.py writes its
`__init__` out for speed; this holds it to the declarations)."""

from __future__ import annotations

from dataclasses import MISSING, fields

from engine import parse_buckets
from engine.assemble.state import Request, State


def test_a_new_state_holds_each_field_s_declared_default():
    request, doc = Request(), parse_buckets({"version": 1})
    state = State(request, doc, 7)
    given = {"request": request, "doc": doc, "seed": 7, "preset": None}
    for f in fields(State):
        if f.name in given:
            expected = given[f.name]
        elif f.default_factory is not MISSING:
            expected = f.default_factory()
        else:
            assert f.default is not MISSING, f.name
            expected = f.default
        value = getattr(state, f.name)
        assert type(value) is type(expected), f.name
        if f.name not in ("notes", "regex_budget"):  # no equality of their own: compared by type
            assert value == expected, f.name


def test_no_two_states_share_a_changeable_default():
    one, two = (
        State(Request(), parse_buckets({"version": 1}), 1),
        State(Request(), parse_buckets({"version": 1}), 2),
    )
    for f in fields(State):
        if f.default_factory is not MISSING:
            assert getattr(one, f.name) is not getattr(two, f.name), f.name
