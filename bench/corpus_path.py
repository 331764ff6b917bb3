"""Where the shared corpus lives for the benchmarks: `../shared/corpus` beside the checkout, or TAVERNKEEP_CORPUS."""

from __future__ import annotations

import os
from pathlib import Path

CORPUS = Path(
    os.environ.get("TAVERNKEEP_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus"
)
