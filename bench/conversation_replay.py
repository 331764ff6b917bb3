"""Per-message variables: extraction and replay speed on a long synthetic chat (pure engine, no DB).

Run: .venv/bin/python bench/conversation_replay.py
Prints the median time to extract every message of a 2,000-message chat in order, to replay all
their ops from empty, and to compute every message's state (what the op panel shows).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.macros.extraction import extract_ops
from engine.macros.replay import Op, replay, replay_steps

MESSAGES = 2_000
RUNS = 5


def message(n: int) -> str:
    roster = json.dumps({f"npc{i}": {"hp": 10 + i, "items": ["knife"]} for i in range(5)})
    parts = [f"Turn {n}: the party presses on through the mines, torches low."]
    if n == 0:
        parts.append("{{setvar::npcs::" + roster + "}}{{setvar::hp::100}}{{setvar::log::[]}}")
    parts.append("{{incvar::turn}}{{addvar::hp::-1}}")
    parts.append(f"{{{{setvar::npcs.npc{n % 5}.hp::{{{{roll::1d20}}}}}}}}")
    parts.append(f"{{{{addvar::log::turn {n}}}}}{{{{setvar::mood::{{{{random::calm::tense::grim}}}}}}}}")
    return " ".join(parts)


T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    samples: list[float] = []
    for _ in range(RUNS):
        start = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def extract_all() -> list[tuple[Op, ...]]:
    state: dict = {}
    ops: list[tuple[Op, ...]] = []
    for n in range(MESSAGES):
        result = extract_ops(message(n), variables=state, random_key=(1, n, 1))
        state = result.variables
        ops.append(result.ops)
    return ops


def main() -> None:
    seconds, ops = timed(extract_all)
    total_ops = sum(len(o) for o in ops)
    print(
        f"extract {MESSAGES} messages ({total_ops} ops): {seconds * 1000:.1f} ms median, {seconds / MESSAGES * 1e6:.0f} µs/message"
    )
    seconds, result = timed(lambda: replay(ops))
    print(
        f"replay {total_ops} ops from empty: {seconds * 1000:.2f} ms median ({len(result.variables)} variables)"
    )
    seconds, _ = timed(lambda: replay_steps(ops))
    print(f"state after each of {MESSAGES} messages: {seconds * 1000:.2f} ms median")


if __name__ == "__main__":
    main()
