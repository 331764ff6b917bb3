"""Per-message variable ops (docs/conversations.md): what an op is, how one changes a state, and replay from
empty.

An op is one write a message made: `setvar`, `addvar`, `incvar`, `decvar` or `deletevar`, with a
key and (for setvar/addvar) an already resolved value. Replaying never evaluates macros; it only
applies the recorded values, so the same ops always give the same state.

Keys may be dotted paths. A path write goes into the JSON value the head key holds (an object or
array, or text that parses as one) — the same rule `{{getvar}}` uses to read — and otherwise the
whole dotted key is a flat variable name, so whatever a write stores, `{{getvar::same.key}}` reads.
Under a path, values are JSON values: text that parses as JSON is stored as what it parses to.
A path write keeps the root's form (JSON text stays text); `addvar` on a
root array stores the array, as the engine does. `addvar` with a path adds at the path; the segments
`__proto__`, `constructor` and `prototype` are refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import EngineError
from .paths import PathError, append_path, delete_path, get_path, increment_path, set_path, split_path
from .values import JsonCollection, added, as_collection, number_of, stepped

WRITE_OPS = ("setvar", "addvar", "incvar", "decvar", "deletevar")
VALUE_OPS = frozenset({"setvar", "addvar"})
MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 100_000


class OpError(EngineError, ValueError):
    """An op that cannot be recorded; the message is one sentence for the user."""


@dataclass(frozen=True, slots=True)
class Op:
    """One recorded write. `value` is empty for incvar, decvar and deletevar."""

    op: str
    key: str
    value: str = ""

    def as_dict(self) -> dict[str, str]:
        """The op as stored in the database (`{"op", "key", "value"}`, value only when it has one)."""
        if self.op in VALUE_OPS:
            return {"op": self.op, "key": self.key, "value": self.value}
        return {"op": self.op, "key": self.key}

    def describe(self) -> str:
        """A short human reading of the op, e.g. `setvar hp = 50`."""
        return f"{self.op} {self.key} = {self.value}" if self.op in VALUE_OPS else f"{self.op} {self.key}"


def make_op(op: str, key: str, value: str = "") -> Op:
    """Return a validated op (name lower-cased, key trimmed); raise OpError with a sentence otherwise."""
    name = (op or "").strip().lower()
    if name not in WRITE_OPS:
        raise OpError(f"{op!r} is not an op; use one of {', '.join(WRITE_OPS)}.")
    key = (key or "").strip()
    if not key:
        raise OpError(f"A {name} op needs a variable name.")
    if len(key) > MAX_KEY_CHARS:
        raise OpError(f"The variable name is longer than {MAX_KEY_CHARS} characters.")
    try:
        split_path(key)
    except PathError as error:
        raise OpError(str(error)) from None
    value = value if name in VALUE_OPS else ""
    if len(value) > MAX_VALUE_CHARS:
        raise OpError(f"The value of {key!r} is longer than {MAX_VALUE_CHARS} characters.")
    return Op(name, key, value)


def op_from_dict(data: Mapping[str, Any]) -> Op:
    """Read a stored op (`{"op", "key", "value"}`); raise OpError when it is malformed."""
    if not isinstance(data, Mapping):
        raise OpError("An op must be an object with op, key and value.")
    value = data.get("value", "")
    return make_op(str(data.get("op", "")), str(data.get("key", "")), "" if value is None else str(value))


def ops_from_json(items: Any) -> tuple[Op, ...]:
    """Read a stored op list, skipping nothing: a malformed entry raises OpError."""
    if not items:
        return ()
    if not isinstance(items, list):
        raise OpError("The ops must be a list.")
    return tuple(op_from_dict(item) for item in items)


@dataclass(frozen=True, slots=True)
class Replay:
    """A variable state and the warnings met while producing it."""

    variables: dict[str, Any]
    warnings: tuple[str, ...] = ()


def apply_ops(variables: Mapping[str, Any], ops: Iterable[Op]) -> Replay:
    """Return the state after applying `ops` in order to `variables` (which is left untouched)."""
    state = dict(variables)
    warnings: list[str] = []
    for op in ops:
        warning = apply_op(state, op)
        if warning:
            warnings.append(warning)
    return Replay(state, tuple(warnings))


def replay(messages: Iterable[Sequence[Op]]) -> Replay:
    """Return the state all the ops produce, message after message, starting from an empty state."""
    state: dict[str, Any] = {}
    warnings: list[str] = []
    for ops in messages:
        for op in ops:
            warning = apply_op(state, op)
            if warning:
                warnings.append(warning)
    return Replay(state, tuple(warnings))


def replay_steps(messages: Iterable[Sequence[Op]]) -> list[Replay]:
    """Return, for each message in order, the state after its ops (replayed from empty) and its warnings."""
    state: dict[str, Any] = {}
    steps: list[Replay] = []
    for ops in messages:
        warnings = [warning for op in ops if (warning := apply_op(state, op))]
        # Values are never changed in place (path writes rebuild their containers), so a shallow copy
        # is a true snapshot.
        steps.append(Replay(dict(state), tuple(warnings)))
    return steps


def apply_op(state: dict[str, Any], op: Op) -> str | None:
    """Apply one op to `state` in place; return a warning sentence when it was refused or had no effect."""
    try:
        target = _locate(state, op.key)
        if target is None:
            _apply_flat(state, op.key, op)
        else:
            head, rest, collection, was_text = target
            changed = _apply_at_path(collection, rest, op)
            state[head] = _encode(changed) if was_text else changed
    except PathError as error:
        return f"{op.describe()}: {error}"
    except _Unchanged as reason:
        return f"{op.describe()}: {reason}"
    return None


class _Unchanged(Exception):
    """The op left the state as it was (e.g. incvar on text)."""


def _locate(state: Mapping[str, Any], key: str) -> tuple[str, str, JsonCollection, bool] | None:
    """For a dotted key whose head holds a JSON collection: (head, rest of the path, collection, was text)."""
    segments = split_path(key)  # refuses forbidden segments before any write, flat or not
    if len(segments) == 1:
        return None
    head = segments[0]
    if head not in state:
        return None
    current = state[head]
    collection = _decode(current)
    if collection is None:
        return None
    return head, ".".join(segments[1:]), collection, isinstance(current, str)


# Replay re-reads the text it just wrote (a growing roster or log), so the collection behind each
# recently encoded text is remembered. Safe because collections here are never changed in place.
_DECODED: dict[int, tuple[str, JsonCollection]] = {}
_DECODED_MAX = 512


def _encode(value: JsonCollection) -> str:
    """A collection back to text, compact as JSON.stringify writes it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if len(_DECODED) >= _DECODED_MAX:
        _DECODED.clear()
    _DECODED[id(text)] = (text, value)
    return text


def _decode(value: Any) -> JsonCollection | None:
    """`as_collection`, answered from `_DECODED` for a text this module encoded."""
    if isinstance(value, str):
        hit = _DECODED.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
    return as_collection(value)


def _json_value(text: str) -> Any:
    """Text that is a JSON value becomes that value; anything else stays text."""
    stripped = text.strip()
    if not stripped:
        return text
    try:
        return json.loads(stripped)
    except ValueError:
        return text


def _stepped(current: Any, op: Op, *, exists: bool) -> Any:
    delta = -1 if op.op == "decvar" else 1
    array = _decode(current) if exists else None
    if isinstance(array, list):
        return [*array, delta]
    number = stepped(current if exists else None, delta)
    return added(current if exists else None, delta) if number is None else number


def _apply_flat(state: dict[str, Any], key: str, op: Op) -> None:
    """An op on a plain variable (no path, or a dotted key whose head holds no JSON collection)."""
    exists = key in state
    current = state.get(key)
    if op.op == "setvar":
        state[key] = op.value
    elif op.op == "deletevar":
        state.pop(key, None)
    elif op.op == "addvar":
        array = _decode(current) if exists else None
        if isinstance(array, list):
            state[key] = [*array, op.value]  # an array, as the engine's addvar stores it
        else:
            state[key] = added(current if exists else None, op.value)
    else:
        state[key] = _stepped(current, op, exists=exists)


def _apply_at_path(collection: JsonCollection, path: str, op: Op) -> JsonCollection:
    """An op inside a JSON collection at `path`; returns the rebuilt collection (the input is not changed)."""
    if op.op == "setvar":
        return set_path(collection, path, _json_value(op.value))
    if op.op == "deletevar":
        return delete_path(collection, path)
    found, current = get_path(collection, split_path(path))
    if op.op == "addvar":
        addition = _json_value(op.value)
        if found and isinstance(current, list):
            return append_path(collection, path, addition)
        return set_path(collection, path, added(current if found else None, addition))
    if found and number_of(current) is None:
        raise _Unchanged("the value at the path is not a number, so it was left unchanged.")
    return increment_path(collection, path, -1 if op.op == "decvar" else 1)
