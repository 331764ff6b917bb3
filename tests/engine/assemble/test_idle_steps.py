"""A step the pipeline does not call because the request has nothing for it (engine/assemble/pipeline.py,
`_idle`) would have changed nothing: the same request with every step called gives the same prompt.
`_idle` restates each step's own "nothing to do" condition, so this holds the two together if either
changes (docs/assembly.md#speed-this-2-core-machine)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import GENERATION_TYPES, assemble, parse_buckets
from engine.assemble import pipeline
from tests.engine.factories import build_preset, depth, make_node, marker
from tests.engine.fuzzing import examples

TEXT = st.text(alphabet=st.sampled_from(list("ab {}:/|<>\\n#xyzUSER")), max_size=30)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]), "name": TEXT, "content": TEXT}
)
DOCUMENT = st.fixed_dictionaries(
    {
        "system_prompt": st.none() | TEXT,
        "persona_prompt": TEXT,
        "history": st.lists(MESSAGE, max_size=5),
        "tail_directives": st.lists(TEXT, max_size=2),
        "generation_type": st.sampled_from(GENERATION_TYPES),
        "impersonation": st.booleans(),
        "budget": st.none()
        | st.just({"context": 4000, "reply": 500})
        | st.just({"context": 60, "reply": 10}),
        "seed": st.integers(min_value=0, max_value=2**31),
    }
)
NODES = [
    make_node("main", content="Main {{char}} {{random::a::b}}"),
    marker("charDescription"),
    marker("chatHistory"),
    depth("d1", "Stay {{getvar::x}}", 1),
]
PRESETS = {
    "none": None,
    "plain": build_preset(NODES),
    "prefill": build_preset(NODES, settings={"assistant_prefill": "Sure,"}),
}


@settings(
    max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=DOCUMENT,
    preset=st.sampled_from(sorted(PRESETS)),
    provider=st.sampled_from([None, "openai", "anthropic"]),
)
def test_the_steps_left_out_for_a_request_would_have_changed_nothing(data, preset, provider, monkeypatch):
    doc = parse_buckets(data)
    skipping = assemble(doc, preset=PRESETS[preset], provider=provider).to_dict()
    with monkeypatch.context() as patched:
        patched.setattr(pipeline, "_idle", lambda request, doc: 0)
        calling_every_step = assemble(doc, preset=PRESETS[preset], provider=provider).to_dict()
    assert skipping == calling_every_step
