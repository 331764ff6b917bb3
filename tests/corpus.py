"""Where the shared corpus of real community presets lives: `../shared/corpus` beside the checkout,
or wherever TAVERNKEEP_CORPUS points.

A clone with nothing beside it skips the corpus tests with one line saying why; CI (`CI` set) runs
them whatever happens, so a missing corpus there fails loudly instead of passing quietly.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CORPUS = Path(
    os.environ.get("TAVERNKEEP_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus"
)
IN_CI = bool(os.environ.get("CI"))

needs_corpus = pytest.mark.skipif(
    not CORPUS.exists() and not IN_CI,
    reason=f"the shared corpus is not beside this checkout ({CORPUS}); set TAVERNKEEP_CORPUS to run these",
)
