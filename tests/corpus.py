"""Where the shared corpus of real community presets lives: `../shared/corpus` beside the checkout,
or wherever TAVERNKEEP_CORPUS points."""

from __future__ import annotations

import os
from pathlib import Path

CORPUS = Path(
    os.environ.get("TAVERNKEEP_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus"
)
