"""Whatever is uploaded, the importer returns a preset or refuses with one sentence: never another error."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.macros import find_unsupported_macros
from engine.st_format import ImportRefused, parse_preset
from tests.engine.fuzzing import examples

from .conftest import is_one_sentence

KEYS = st.sampled_from(
    [
        "prompts",
        "prompt_order",
        "identifier",
        "name",
        "content",
        "role",
        "marker",
        "enabled",
        "order",
        "character_id",
        "injection_position",
        "injection_depth",
        "injection_order",
        "injection_trigger",
        "forbid_overrides",
        "story_string",
        "context",
        "sysprompt",
        "instruct",
        "system_prompt",
        "post_history",
        "main_prompt",
        "entries",
        "spec",
        "data",
        "temperature",
        "wi_format",
        "squash_system_messages",
        "reverse_proxy",
    ]
)
TOKENS = [*"ab {}:/#|<>\n\x00", "{{", "}}", "{{#if system}}", "{{/if}}", "{{// ", "{{char}}", "{{getvar::"]
TEXT = st.lists(st.sampled_from(TOKENS), max_size=30).map("".join)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), TEXT
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(KEYS, inner, max_size=6)),
    max_leaves=40,
)


def _outcome(raw: bytes) -> None:
    try:
        parsed = parse_preset(raw, filename="fuzz.json")
    except ImportRefused as refused:
        assert is_one_sentence(refused.message), refused.message
        return
    assert all(w.endswith(".") for w in parsed.summary.warnings)
    assert len({n.identifier for n in parsed.nodes}) == len(parsed.nodes)


@settings(max_examples=examples(80), deadline=None)
@given(st.dictionaries(KEYS, JSON_VALUES, max_size=8))
def test_any_json_object_is_imported_or_refused_with_one_sentence(data: dict) -> None:
    _outcome(json.dumps(data).encode())


@settings(max_examples=examples(100), deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_are_imported_or_refused_with_one_sentence(raw: bytes) -> None:
    _outcome(raw)


@settings(max_examples=examples(150), deadline=None)
@given(TEXT)
def test_the_import_summary_never_misses_an_unknown_macro(text: str) -> None:
    raw = json.dumps({"prompts": [{"identifier": "main", "name": "Main", "role": "system", "content": text}]})
    try:
        parsed = parse_preset(raw.encode("utf-8", "surrogatepass"), filename="p.json", max_bytes=1 << 20)
    except ImportRefused:
        return
    node_text = next(node.content for node in parsed.nodes if node.identifier == "main")
    assert set(parsed.summary.unsupported_macros) == set(find_unsupported_macros(node_text))


PROMPT_LIKE = st.dictionaries(KEYS, JSON_VALUES, max_size=8)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.one_of(PROMPT_LIKE, JSON_VALUES), min_size=1, max_size=6),
    st.lists(st.fixed_dictionaries({"character_id": JSON_VALUES, "order": JSON_VALUES}), max_size=3),
)
def test_any_prompt_manager_shaped_file_is_imported_or_refused(prompts: list, orders: list) -> None:
    _outcome(json.dumps({"prompts": prompts, "prompt_order": orders}).encode())


@settings(max_examples=examples(100), deadline=None)
@given(TEXT, st.one_of(st.none(), TEXT), JSON_VALUES)
def test_any_story_string_is_converted_without_error(
    story: str, system: str | None, instruct: object
) -> None:
    data: dict[str, Any] = {
        "context": {"story_string": story, "post_history": system},
        "sysprompt": {"content": system},
    }
    data["instruct"] = instruct
    _outcome(json.dumps(data).encode())
