"""Properties of the engine: it never raises on valid documents, is deterministic for a seed, and
never reaches the network."""

from __future__ import annotations

import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import assemble, parse_buckets
from tests.engine.factories import build_preset, depth, make_node, marker
from tests.engine.fuzzing import examples

TEXT = st.text(alphabet=st.sampled_from(list("ab {}:/|<>\\n#xyzUSER")) | st.characters(), max_size=40)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]), "name": TEXT, "content": TEXT}
)
DOCUMENT = st.fixed_dictionaries(
    {
        "system_prompt": st.none() | TEXT,
        "persona_prompt": TEXT,
        "personality": st.lists(TEXT, max_size=3),
        "documents": st.lists(TEXT, max_size=2),
        "sample_dialogues": st.lists(st.fixed_dictionaries({"user": TEXT, "char": TEXT}), max_size=2),
        "history": st.lists(MESSAGE, max_size=6),
        "tail_directives": st.lists(TEXT, max_size=2),
        "seed": st.integers(min_value=0, max_value=2**31),
    }
)
PRESET = build_preset(
    [
        make_node("main", content="Main {{char}} {{random::a::b}}"),
        marker("charDescription"),
        make_node("p", content="{{personality}} {{setvar::x::1}}"),
        marker("dialogueExamples"),
        marker("chatHistory"),
        depth("d0", "Stay {{getvar::x}}", 0),
        depth("d3", "Deep", 3, role="user"),
    ]
)


@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=DOCUMENT,
    style=st.sampled_from(["merge", "standalone"]),
    provider=st.sampled_from([None, "openai", "anthropic", "gemini"]),
)
def test_any_valid_document_assembles_and_the_same_seed_gives_the_same_messages(data, style, provider):
    doc = parse_buckets(data)
    first = assemble(doc, preset=PRESET, style=style, provider=provider)
    again = assemble(doc, preset=PRESET, style=style, provider=provider)
    assert first.to_dict() == again.to_dict()
    assert all(m.role in ("system", "user", "assistant") for m in first.messages)
    assert len(first.tokens.per_message) == len(first.messages)


def test_a_network_connection_fails_the_test():
    with pytest.raises(AssertionError, match="network access attempted"):
        socket.create_connection(("203.0.113.7", 443), timeout=0.1)
