"""Assembly speed: every corpus preset with the default sample and a 200-message history.

    .venv/bin/python bench/assemble.py [--runs N]

Prints, per preset, the median and max assembly time without token counting, then the token
counting time alone (cold: first count of each text; warm: from the hash cache), and a summary
against the targets (≤ 5 ms typical, ≤ 25 ms the heaviest, without counting).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from corpus_path import CORPUS  # noqa: E402

from engine.assemble import assemble  # noqa: E402
from engine.buckets import parse_buckets  # noqa: E402
from engine.compiled import compile_preset  # noqa: E402
from engine.st_format import ImportRefused, parse_preset  # noqa: E402
from engine.tokens import _counts, message_tokens  # noqa: E402

CORPUS = CORPUS
SPEAKERS = ("Mira", "Dax", "Ren")


def long_document(messages: int = 200) -> dict:
    data = json.loads((ROOT / "assembly" / "default_buckets.json").read_text(encoding="utf-8"))
    history = []
    for i in range(messages):
        if i % 3 == 2:
            history.append(
                {
                    "role": "assistant",
                    "name": "Tomori",
                    "content": f"*turns a page of the ledger* Entry {i}: the answer hides in plain sight, as riddles do. Try again.",
                }
            )
        else:
            history.append(
                {
                    "role": "user",
                    "name": SPEAKERS[i % 3],
                    "content": f"Message {i}: Quill checks the door again and mutters about moonrise and tallies.",
                }
            )
    data["history"] = history
    return data


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    doc = parse_buckets(long_document())
    start = time.perf_counter()
    message_tokens("load the encoding tables once")
    table_load = (time.perf_counter() - start) * 1000
    rows = []
    for path in sorted([*CORPUS.glob("pm/*.json"), *CORPUS.glob("legacy/*.json")]):
        try:
            parsed = parse_preset(path.read_bytes(), filename=path.name)
        except ImportRefused:
            continue
        preset = compile_preset(
            preset_id=1,
            name=parsed.name,
            injection_style="merge",
            settings=parsed.settings,
            nodes=parsed.nodes,
        )
        assemble(doc, preset=preset, count_tokens=False)  # warm-up
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            result = assemble(doc, preset=preset, count_tokens=False)
            times.append((time.perf_counter() - start) * 1000)
        _counts.clear()
        start = time.perf_counter()
        for m in result.messages:
            message_tokens(m.content)
        cold = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        for m in result.messages:
            message_tokens(m.content)
        warm = (time.perf_counter() - start) * 1000
        rows.append(
            (
                path.name,
                len(parsed.nodes),
                len(result.messages),
                statistics.median(times),
                max(times),
                cold,
                warm,
            )
        )

    print(
        f"{'preset':46} {'nodes':>5} {'msgs':>5} {'median ms':>10} {'max ms':>8} {'count cold':>11} {'count warm':>11}"
    )
    for name, nodes, msgs, med, mx, cold, warm in rows:
        print(f"{name:46} {nodes:5d} {msgs:5d} {med:10.2f} {mx:8.2f} {cold:11.2f} {warm:11.2f}")
    medians = sorted(r[3] for r in rows)
    heaviest = max(rows, key=lambda r: r[3])
    print()
    print(f"presets: {len(rows)}; 200-message history; {runs} runs each; assembly without token counting")
    print(f"typical (median of medians): {statistics.median(medians):.2f} ms   target <= 5 ms")
    print(f"heaviest: {heaviest[0]} {heaviest[3]:.2f} ms median, {heaviest[4]:.2f} ms max   target <= 25 ms")
    print(f"encoding tables load (once per process): {table_load:.0f} ms")
    print(
        f"token counting, cold cache: median {statistics.median(r[5] for r in rows):.2f} ms, max {max(r[5] for r in rows):.2f} ms"
    )
    print(
        f"token counting, warm cache: median {statistics.median(r[6] for r in rows):.3f} ms, max {max(r[6] for r in rows):.3f} ms"
    )


if __name__ == "__main__":
    main()
