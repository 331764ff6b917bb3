"""How long the engine's property tests search (docs/architecture.md#running-the-tests-fast-and-in-full).

Each test names the examples its full search runs. The suite runs a fifth of that (at least 20), so
`make test` stays short and every run still draws fresh examples (Hypothesis keeps any failure it
finds and tries it first next time). `make fuzz` (`FUZZ=long`) runs each full count, then
`bench/fuzz.py` runs 10,000+ per parser.
"""

from __future__ import annotations

import os

LONG = os.environ.get("FUZZ", "").strip().lower() == "long"
SUITE_SHARE = 5
SUITE_FLOOR = 20


def examples(full: int) -> int:
    """The examples a property test runs: its full count under `FUZZ=long`, a fifth in the suite."""
    return full if LONG else max(SUITE_FLOOR, full // SUITE_SHARE)
