"""Parse-alone timings for the preset importer (docs/import.md): the largest corpus presets and a generated
2 MB one.

Run: .venv/bin/python bench/parse.py   (prints the median of several runs per file; targets in the header)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench.corpus_path import CORPUS
from devtools.genpreset import make_big_preset
from engine.st_format import parse_preset

CORPUS = CORPUS / "pm"
RUNS = 9
LARGEST = 4
TARGET_CORPUS_MS = 100
TARGET_BIG_MS = 500


def median_ms(raw: bytes, filename: str) -> tuple[float, int]:
    """Median parse time in milliseconds over RUNS runs, and the node count."""
    parse_preset(raw, filename=filename)  # warm-up: imports, regex compilation
    times = []
    nodes = 0
    for _ in range(RUNS):
        start = time.perf_counter()
        nodes = len(parse_preset(raw, filename=filename).nodes)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), nodes


def main() -> None:
    print(
        f"parse_preset, median of {RUNS} runs (targets: corpus <= {TARGET_CORPUS_MS} ms, 2 MB <= {TARGET_BIG_MS} ms)"
    )
    files = sorted(CORPUS.glob("*.json"), key=lambda p: p.stat().st_size, reverse=True)[:LARGEST]
    for path in files:
        raw = path.read_bytes()
        try:
            ms, nodes = median_ms(raw, path.name)
        except Exception as exc:  # a refused file still has a timing worth showing
            print(f"  {path.name:45} {len(raw) / 1e6:5.2f} MB  refused: {exc}")
            continue
        verdict = "ok" if ms <= TARGET_CORPUS_MS else "OVER TARGET"
        print(f"  {path.name:45} {len(raw) / 1e6:5.2f} MB  {nodes:4d} nodes  {ms:7.1f} ms  {verdict}")
    raw = make_big_preset(nodes=500, size=2_000_000)
    ms, nodes = median_ms(raw, "generated.json")
    verdict = "ok" if ms <= TARGET_BIG_MS else "OVER TARGET"
    print(
        f"  {'generated (devtools/genpreset.py)':45} {len(raw) / 1e6:5.2f} MB  {nodes:4d} nodes  {ms:7.1f} ms  {verdict}"
    )


if __name__ == "__main__":
    main()
