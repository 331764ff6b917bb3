"""Properties of the contributor over generated entries: one verdict each, the cap, newest first."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import VERDICTS, EntrySnapshot, StmContext, StmPolicy, StmSettings, contribute
from tests.engine.fuzzing import examples
from tests.engine.stm.conftest import HARBOR, LANTERN, NOW

entry_fields = st.tuples(
    st.sampled_from([LANTERN, HARBOR, None]),
    st.integers(min_value=500, max_value=520),
    st.floats(min_value=0, max_value=30, allow_nan=False),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["", "a summary"]),
)


@settings(max_examples=examples(200), deadline=None)
@given(
    rows=st.lists(entry_fields, max_size=25),
    bypass=st.booleans(),
    opt_in=st.booleans(),
    cap=st.integers(min_value=0, max_value=5),
)
def test_every_entry_gets_one_verdict_and_the_shown_ones_are_the_newest_candidates(rows, bypass, opt_in, cap):
    entries = [
        EntrySnapshot(
            entry_id=i,
            server_id=server,
            channel=channel,
            user=1,
            updated_at=NOW - timedelta(hours=age),
            channel_private=private,
            parent_private=parent_private,
            summary=summary,
        )
        for i, (server, channel, age, private, parent_private, summary) in enumerate(rows)
    ]
    result = contribute(
        entries=entries,
        context=StmContext(channel=500, user=1),
        settings=StmSettings(max_other_channels=cap),
        now=NOW,
        policy=StmPolicy(
            server_id=LANTERN, privacy_bypass=bypass, consenting_servers=frozenset({HARBOR} if opt_in else ())
        ),
    )
    assert sorted(v.entry_id for v in result.verdicts) == list(range(len(entries)))
    assert all(v.verdict in VERDICTS for v in result.verdicts)
    by_id = {v.entry_id: v.verdict for v in result.verdicts}
    shown = [e for e in entries if by_id[e.entry_id] == "shown"]
    cut = [e for e in entries if by_id[e.entry_id] == "cut_by_cap"]
    assert len(shown) <= cap
    assert not cut or len(shown) == cap
    assert all(s.updated_at >= c.updated_at for s in shown for c in cut)
    assert bool(result.items and result.items[0].kind == "other_channels") == bool(shown)
