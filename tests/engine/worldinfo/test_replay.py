"""docs/worldinfo.md#timed-effects: a sample conversation replays its messages to compute the timed state it
reaches.

World Info runs after each message in turn (the chat one message longer each time, each step from
the state the previous one left, the first from empty); the assembly at message N starts from the
state the first N - 1 messages reach."""

from __future__ import annotations

from typing import Any

from engine import assemble, parse_buckets
from engine.worldinfo import (
    ActivationRequest,
    Replay,
    ScanTexts,
    WorldInfoInput,
    replay_state,
)

from .conftest import book, history, words

STICKY = {"uid": 1, "key": ["lantern"], "content": "The lantern stays lit.", "sticky": 3}
COOLING = {"uid": 2, "key": ["bell"], "content": "The bell rings.", "cooldown": 3}


def chat(*texts: str) -> list[dict[str, Any]]:
    return [{"role": "user", "name": "Ann", "content": text} for text in texts]


def at_message(texts: list[str], n: int, *entries: dict[str, Any]) -> dict[str, Any]:
    """The World Info explanation of the assembly at message `n` of a conversation of `texts`."""
    document = parse_buckets({"names": {"user": "Ann", "char": "Mira"}, "history": chat(*texts[:n])})
    world_info = WorldInfoInput(books=(book(*entries),), replay=Replay(seed=0))
    result = assemble(document, seed=7, world_info=world_info, count_tokens=False)
    return result.to_dict()["world_info"]


CONVERSATION = [
    "hello",
    "a quiet road",
    "a lantern in the dark",
    "we walk on",
    "still walking",
    "dawn",
    "rest",
]


def test_a_sticky_entry_activated_by_message_3_stays_while_its_window_lasts_and_is_gone_after() -> None:
    at_3 = at_message(CONVERSATION, 3, STICKY)
    assert [a["reason"] for a in at_3["activated"]] == ['key "lantern" in message 3']
    at_5 = at_message(CONVERSATION, 5, STICKY)  # message 3 is out of the scan depth of 2 by now
    assert [(a["uid"], a["reason"]) for a in at_5["activated"]] == [(1, "sticky")]
    assert at_5["replayed"]["messages"] == 4
    assert [r["kind"] for r in at_5["replayed"]["state"].values()] == ["sticky"]
    assert at_message(CONVERSATION, 6, STICKY)["activated"] == []


def test_a_cooldown_started_by_message_3_shows_as_skipped_with_the_message_it_ends() -> None:
    texts = ["hello", "quiet", "the bell", "the bell again", "more bell", "the bell once more"]
    at_4 = at_message(texts, 4, COOLING)
    assert at_4["activated"] == []
    assert [(s["uid"], s["reason"]) for s in at_4["skipped"]] == [(2, "cooldown until message 6")]
    at_6 = at_message(texts, 6, COOLING)
    assert [a["reason"] for a in at_6["activated"]] == ['key "bell" in message 6']


def test_the_replay_starts_from_empty_whatever_state_the_document_carries() -> None:
    stale = {"x": {"book": "Lore", "uid": 1, "kind": "sticky", "start": 1, "end": 99, "cooldown": 0}}
    document = parse_buckets(
        {"names": {"user": "Ann"}, "history": chat("one", "two", "three"), "world_info_state": stale}
    )
    result = assemble(
        document,
        seed=7,
        world_info=WorldInfoInput(books=(book(STICKY),), replay=Replay()),
        count_tokens=False,
    )
    assert result.to_dict()["world_info"]["activated"] == []


def request(*texts: str, entries=(STICKY, COOLING)) -> ActivationRequest:
    return ActivationRequest(
        books=[book(*entries)], texts=ScanTexts(history=history(*texts)), names={"user": "Ann"}
    )


def test_the_replay_runs_at_most_one_step_per_message_and_none_without_timed_entries() -> None:
    texts = ("a lantern", "the bell", "on", "on")
    everything = replay_state(request(*texts), steps=4, count_tokens=words)
    assert replay_state(request(*texts), steps=400, count_tokens=words) == everything
    assert {r["uid"] for r in everything.values()} == {2}  # the sticky span (messages 2–3) is over
    assert {r["uid"] for r in replay_state(request(*texts), steps=3, count_tokens=words).values()} == {1, 2}
    plain = {"uid": 3, "key": ["lantern"], "content": "Plain."}
    assert replay_state(request(*texts, entries=(plain,)), steps=4, count_tokens=words) == {}


def test_a_cached_replay_gives_the_same_state_and_a_longer_chat_reuses_the_steps_before() -> None:
    texts = ("a lantern", "the bell", "on", "the bell", "a lantern", "on", "the bell")
    for steps in range(len(texts) + 1):
        plain = replay_state(request(*texts), steps=steps, count_tokens=words)
        cached = replay_state(request(*texts), steps=steps, count_tokens=words, cache_key="words")
        again = replay_state(request(*texts), steps=steps, count_tokens=words, cache_key="words")
        assert plain == cached == again, steps
