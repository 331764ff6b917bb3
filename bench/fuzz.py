"""Fuzz the three parsers of untrusted input with Hypothesis, far past what CI runs.

    .venv/bin/python bench/fuzz.py [--examples 10000] [--seed 0]

Targets: the preset importer (preset-shaped JSON, arbitrary JSON, truncated uploads, random bytes),
the macro engine (macro soup with random variables and seeds), the bucket parser, and the whole
assembly of any accepted preset with any accepted (mostly near-valid) document. The only
acceptable failures are ImportRefused / BucketError; anything else stops the run with the
falsifying example. Prints examples run, refusals, time and the slowest example per target.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from devtools.fuzz.strategies import (  # noqa: E402
    assembly_inputs,
    bucket_documents,
    json_values,
    macro_text,
    preset_uploads,
)
from devtools.fuzz.targets import assembly_target, bucket_target, import_target, macro_target  # noqa: E402


class Tally:
    def __init__(self) -> None:
        self.runs = 0
        self.slowest = 0.0

    def timed(self, call, *args) -> None:
        start = time.perf_counter()
        call(*args)
        self.slowest = max(self.slowest, time.perf_counter() - start)
        self.runs += 1


def run(name: str, strategy, call, examples: int, rng_seed: int) -> None:
    tally = Tally()
    config = settings(
        max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None
    )

    @seed(rng_seed)
    @config
    @given(strategy)
    def fuzz(args) -> None:
        tally.timed(call, *args)

    start = time.perf_counter()
    fuzz()
    elapsed = time.perf_counter() - start
    print(
        f"{name:<10} {tally.runs:>7} examples  {elapsed:7.1f} s  "
        f"{tally.runs / elapsed:8.0f}/s  slowest {tally.slowest * 1000:7.1f} ms  errors 0"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    import django

    django.setup()
    targets = [
        ("importer", st.tuples(preset_uploads), import_target),
        ("bytes", st.tuples(st.binary(max_size=4000)), import_target),
        (
            "macros",
            st.tuples(
                macro_text,
                st.dictionaries(st.text(max_size=6), json_values, max_size=4),
                st.integers(0, 2**63),
            ),
            macro_target,
        ),
        ("buckets", st.tuples(bucket_documents), bucket_target),
        ("assembly", assembly_inputs, assembly_target),
    ]
    print(f"fuzz: {options.examples} examples per target, seed {options.seed}")
    for name, strategy, call in targets:
        run(name, strategy, call, options.examples, options.seed)


if __name__ == "__main__":
    main()
