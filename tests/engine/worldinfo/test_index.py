"""The key index only skips entries that cannot match: with it, the same entries activate as when
every entry is tested in every pass (random books of words, phrases, CJK and punctuated keys)."""

from __future__ import annotations

import random

import pytest

from engine.worldinfo import plan as plan_module

from .conftest import book, run, uids

WORDS = ["moon", "tide", "harbor", "lantern", "safe", "haven", "sir", "robin", "o'neil", "x-ray", "ray"]
CJK = ["魔法", "魔法师", "龙", "港口"]


def _key(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.4:
        return rng.choice(WORDS)
    if roll < 0.6:
        return f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
    if roll < 0.8:
        return rng.choice(CJK)
    return rng.choice(WORDS).capitalize()


def _text(rng: random.Random) -> str:
    pieces = [
        rng.choice(WORDS + CJK + ["havens", "robinson", "moonlight", "ray-gun", "。"]) for _ in range(12)
    ]
    return rng.choice([" ", "", ", "]).join(pieces)


@pytest.mark.parametrize("seed", range(25))
def test_the_index_activates_exactly_what_testing_every_entry_activates(seed: int, monkeypatch) -> None:
    rng = random.Random(seed)
    entries = [
        {
            "key": [_key(rng) for _ in range(rng.randint(1, 3))],
            "content": _text(rng),
            "matchWholeWords": rng.choice([None, True, False]),
            "caseSensitive": rng.choice([None, None, True]),
            "order": rng.randint(0, 50),
        }
        for _ in range(40)
    ]
    messages = tuple(_text(rng) for _ in range(4))
    settings = {"scan_depth": 3, "budget_percent": 100, "context_size": 100_000}
    indexed = uids(run(book(*entries), messages, settings=settings, seed=seed))
    plan_module._PLANS.clear()
    monkeypatch.setattr(plan_module, "key_signature", lambda *args, **kwargs: None)
    exhaustive = uids(run(book(*entries), messages, settings=settings, seed=seed))
    plan_module._PLANS.clear()
    assert indexed == exhaustive
