"""Benchmark the macro engine on every corpus preset: compile once, then render all nodes (median of runs).

Run: .venv/bin/python bench/macros_render.py [--runs N] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus_path import CORPUS
from engine.macros import MacroEnv, Segment, compile_text, render_segments, resolve_identity

DEFAULT_CORPUS = CORPUS / "pm"


def node_texts(path: Path) -> list[tuple[str, str]]:
    """(identifier, content) of every prompt with string content; [] when the file does not parse."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return []
    prompts = data.get("prompts") if isinstance(data, dict) else None
    if not isinstance(prompts, list):
        return []
    out = []
    for index, prompt in enumerate(prompts):
        if isinstance(prompt, dict) and isinstance(prompt.get("content"), str):
            out.append((str(prompt.get("identifier") or index), prompt["content"]))
    return out


def median_ms(action, runs: int) -> tuple[float, float]:
    """Median wall-clock and median CPU milliseconds (CPU time is steadier on a busy machine)."""
    wall, cpu = [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        action()
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    options = parser.parse_args()
    env = MacroEnv(personality="curious\nkind", description="A lantern keeper.", server_id=1001)
    total_chars = 0
    total_ms = 0.0
    print(
        f"{'preset':45} {'nodes':>5} {'chars':>9} {'compile ms':>10} {'render ms':>9} {'cpu ms':>7} {'MB/s':>7}"
        f" {'names ms':>8}"
    )
    for path in sorted(options.corpus.glob("*.json")):
        texts = node_texts(path)
        if not texts:
            continue
        chars = sum(len(text) for _, text in texts)
        compile_ms, _ = median_ms(
            lambda texts=texts: [compile_text(text) for _, text in texts], max(3, options.runs // 3)
        )
        segments = [Segment(key, compile_text(text)) for key, text in texts]
        render_ms, render_cpu = median_ms(
            lambda segments=segments: render_segments(segments, env=env, seed=7), options.runs
        )
        rendered = [segment.text for segment in render_segments(segments, env=env, seed=7).segments]
        names_ms, _ = median_ms(
            lambda rendered=rendered: [
                resolve_identity(t, user="Ann", char="Lantern", seed=7) for t in rendered
            ],
            options.runs,
        )
        total_chars += chars
        total_ms += render_ms
        mbps = chars / 1e6 / (render_ms / 1000) if render_ms else float("inf")
        print(
            f"{path.name:45} {len(texts):5} {chars:9} {compile_ms:10.2f} {render_ms:9.2f} {render_cpu:7.2f} {mbps:7.1f}"
            f" {names_ms:8.2f}"
        )
    print(
        f"all presets: {total_chars} chars rendered in {total_ms:.1f} ms ({total_chars / 1e6 / (total_ms / 1000):.1f} MB/s)"
    )


if __name__ == "__main__":
    main()
