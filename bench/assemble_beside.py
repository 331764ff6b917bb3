"""Assembly speed against TomoriBot, estimated for the reference machine: this checkout run beside the
commit the reference file names.

    .venv/bin/python bench/assemble_beside.py [--beside COMMIT|DIR] [--times N] [--runs N] [--rounds N]

The reference file (`../shared/perf/tomoribot-reference.tsv`) holds TomoriBot's CPU milliseconds per
preset and, from the same quiet run, our engine's as it was at one commit (its `ours_*` columns). A
machine can be twice as fast or slow as the reference's, and a loaded one moves from minute to
minute, so a ratio against the file alone says little. This script runs `bench/assemble.py
--no-scaling` of this checkout and of that commit (a temporary git worktree, or `--beside DIR`)
alternately, `--times` each, with the same interpreter, keeps each preset's least disturbed figure
(the minimum over the runs), and estimates for the reference machine:

    ours here / that commit here × that commit there / TomoriBot there

It prints the machine factor (that commit here over there), the median estimate with every node on
("all") and with the presets' own toggles ("own") against the issue's target (≤ 0.5), the presets
over 1.0 (the target is none), and the worst ten. docs/assembly.md carries the figures.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.corpus_path import CORPUS  # noqa: E402

REFERENCE = CORPUS.parent / "perf" / "tomoribot-reference.tsv"
TARGET_MEDIAN, TARGET_EACH = 0.5, 1.0
TOGGLES = ("all", "own")

Figures = dict[tuple[str, str], float]  # (preset, toggles) -> CPU ms


def reference() -> tuple[str, dict[str, dict[str, float]]]:
    """The commit the reference file names for its `ours_*` columns, and its rows by preset."""
    text = REFERENCE.read_text(encoding="utf-8")
    named = re.search(r"Tavernkeep main at ([0-9a-f]{7,40})", text)
    if named is None:
        sys.exit(f'{REFERENCE} names no commit of ours ("Tavernkeep main at <commit>")')
    rows: dict[str, dict[str, float]] = {}
    header: list[str] = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cells = line.split("\t")
        if not header:
            header = cells
            continue
        rows[cells[0]] = {key: float(value) for key, value in zip(header[1:], cells[1:], strict=True)}
    return named.group(1), rows


def parse_table(output: str) -> Figures:
    """bench/assemble.py's per-preset lines: name, chars, all ms, tb, ratio, own ms, tb, ratio."""
    figures: Figures = {}
    for line in output.splitlines():
        cells = line.split()
        if len(cells) == 8 and cells[1].isdigit():
            figures[(cells[0], "all")] = float(cells[2])
            figures[(cells[0], "own")] = float(cells[5])
    return figures


def run_bench(root: Path, args: argparse.Namespace) -> Figures:
    command = [sys.executable, str(root / "bench" / "assemble.py"), "--no-scaling"]
    command += ["--runs", str(args.runs), "--rounds", str(args.rounds)]
    env = {**os.environ, "TAVERNKEEP_CORPUS": str(CORPUS), "TAVERNKEEP_REFERENCE": str(REFERENCE)}
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{root}: bench/assemble.py failed:\n{done.stderr[-2000:]}")
    return parse_table(done.stdout)


def least(runs: list[Figures]) -> Figures:
    return {key: min(run[key] for run in runs if key in run) for key in runs[0]}


def estimate(
    ours: Figures, beside: Figures, rows: dict[str, dict[str, float]]
) -> list[tuple[float, str, str]]:
    estimates = []
    for (name, toggles), ms in ours.items():
        row = rows.get(name)
        if row is None or (name, toggles) not in beside:
            continue
        there = row[f"ours_assemble_{toggles}"] / row[f"tb_reassembly_{toggles}"]
        estimates.append((ms / beside[(name, toggles)] * there, name, toggles))
    return estimates


def report(ours: Figures, beside: Figures, rows: dict[str, dict[str, float]], commit: str) -> None:
    factor = statistics.median(
        ms / rows[name][f"ours_assemble_{toggles}"] for (name, toggles), ms in beside.items() if name in rows
    )
    print(f"machine factor: {commit} here / there, median over presets {factor:.2f}")
    estimates = estimate(ours, beside, rows)
    for toggles in TOGGLES:
        values = [value for value, _, kind in estimates if kind == toggles]
        print(
            f"estimated ours/TomoriBot on the reference machine, {toggles}: median {statistics.median(values):.2f} "
            f"(target <= {TARGET_MEDIAN}), over {TARGET_EACH}: {sum(value > TARGET_EACH for value in values)} "
            f"of {len(values)}"
        )
    print(f"\n{'preset (toggles)':48} {'est.':>6} {'ours ms':>8} {commit[:7] + ' ms':>11} {'TomoriBot':>9}")
    for value, name, toggles in sorted(estimates, reverse=True)[:10]:
        tomori = rows[name][f"tb_reassembly_{toggles}"]
        print(
            f"{name + ' (' + toggles + ')':48} {value:6.2f} {ours[(name, toggles)]:8.3f} "
            f"{beside[(name, toggles)]:11.3f} {tomori:9.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--beside", help="a commit (default: the one the reference file names) or a checkout's folder"
    )
    parser.add_argument("--times", type=int, default=3, help="runs of each checkout, alternated (default 3)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    commit, rows = reference()
    given = args.beside or commit
    with tempfile.TemporaryDirectory(prefix="tk-beside-") as scratch:
        if Path(given).is_dir():
            beside_root = Path(given).resolve()
        else:
            beside_root = Path(scratch) / "checkout"
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(beside_root), given],
                check=True,
                capture_output=True,
            )
        try:
            ours_runs, beside_runs = [], []
            for _ in range(args.times):
                ours_runs.append(run_bench(ROOT, args))
                beside_runs.append(run_bench(beside_root, args))
        finally:
            if not Path(given).is_dir():
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(beside_root)], check=False
                )
    print(
        f"this checkout beside {given}, bench/assemble.py alternated {args.times}x each "
        f"({args.rounds} rounds x {args.runs} calls, a fresh seed and render per call); least of the runs per preset"
    )
    report(least(ours_runs), least(beside_runs), rows, commit)


if __name__ == "__main__":
    main()
