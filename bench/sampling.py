"""Sampling cost per request: mapping a preset's sampler settings to each provider's parameters.

    .venv/bin/python bench/sampling.py [--runs N]

Prints the median time of `generation_settings` over every corpus preset and provider, and of
`with_generation_settings` on a payload, against the budget of 1% of the 5 ms typical assembly.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.corpus_path import CORPUS  # noqa: E402
from engine.sampling import PROVIDERS, generation_settings, sampler_settings_of, with_generation_settings  # noqa: E402

BUDGET_US = 50.0  # 1% of the typical assembly target (5 ms)


def corpus_settings() -> list:
    found = []
    for path in sorted((CORPUS / "pm").glob("*.json")) + sorted((CORPUS / "legacy").glob("*.json")):
        try:
            data = json.loads(path.read_bytes().decode("utf-8-sig"), strict=False)
        except ValueError:
            continue
        if isinstance(data, dict):
            found.append(sampler_settings_of(data))
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    settings = corpus_settings()
    payload = {"messages": [{"role": "user", "content": "hi"}] * 50}
    mapping, applying = [], []
    for _ in range(args.runs):
        for one in settings:
            for provider in PROVIDERS:
                start = time.perf_counter()
                result = generation_settings(one, provider)
                mapping.append(time.perf_counter() - start)
                start = time.perf_counter()
                with_generation_settings(provider, payload, result)
                applying.append(time.perf_counter() - start)
    map_us = statistics.median(mapping) * 1e6
    apply_us = statistics.median(applying) * 1e6
    print(f"presets: {len(settings)}, providers: {len(PROVIDERS)}, runs: {args.runs}")
    print(f"generation_settings      median {map_us:7.1f} µs   max {max(mapping) * 1e6:8.1f} µs")
    print(f"with_generation_settings median {apply_us:7.1f} µs")
    print(
        f"per request (map + apply): {map_us + apply_us:.1f} µs = {(map_us + apply_us) / BUDGET_US:.2f}× the budget of {BUDGET_US:.0f} µs"
    )


if __name__ == "__main__":
    main()
