"""Run every benchmark script in bench/, one after another, and print their numbers.

    .venv/bin/python bench/run_all.py [--only NAME ...] [--skip NAME ...] [--quick]

Each script runs in its own process with a time limit; its output is printed under a heading, and a
closing table gives each script's exit status and wall time. Scripts that need PostgreSQL get
DATABASE_URL=postgres://postgres@127.0.0.1:5432/tavernkeep_bench (and REDIS_URL, DB 11, when none is
set). `--quick` passes smaller sizes to the long-running scripts (for a smoke run, not for figures).
Exit status 1 when any script failed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
BENCH_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/tavernkeep_bench"
BENCH_REDIS_URL = "redis://127.0.0.1:6379/11"
# This runner, and the corpus path the others import (what bench shares with tests is in devtools/).
NOT_BENCHMARKS = {"run_all.py", "corpus_path.py"}
NEEDS_POSTGRES = {"store.py", "stm_expiry.py", "load_mixed.py", "neighbours_load.py"}
QUICK_ARGS = {
    "assemble_beside.py": ["--times", "1", "--runs", "5", "--rounds", "1"],
    "fuzz.py": ["--examples", "500"],
    "load_mixed.py": ["--requests", "1000"],
    "load_assemble.py": ["--requests", "500"],
    "stm_expiry.py": ["--rows", "100000"],
    "neighbours_load.py": ["--seconds", "5"],
}
TIME_LIMIT_SECONDS = 1800


def scripts() -> list[Path]:
    """The benchmark scripts, in name order."""
    return sorted(
        p for p in BENCH.glob("*.py") if p.name not in NOT_BENCHMARKS and not p.name.startswith("_")
    )


def environment(script: Path) -> dict[str, str]:
    env = {**os.environ}
    env.pop("TEST_DATABASE_NAME", None)
    if script.name in NEEDS_POSTGRES:
        env["DATABASE_URL"] = BENCH_DATABASE_URL
        env.setdefault("REDIS_URL", BENCH_REDIS_URL)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--skip", nargs="*", default=[])
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    chosen = [
        s
        for s in scripts()
        if (not options.only or s.stem in options.only or s.name in options.only)
        and s.stem not in options.skip
        and s.name not in options.skip
    ]
    results: list[tuple[str, str, float]] = []
    for script in chosen:
        args = QUICK_ARGS.get(script.name, []) if options.quick else []
        print(f"\n===== {script.name} {' '.join(args)}".rstrip(), flush=True)
        start = time.perf_counter()
        try:
            done = subprocess.run(
                [PYTHON, str(script), *args], cwd=ROOT, env=environment(script), timeout=TIME_LIMIT_SECONDS
            )
            status = "ok" if done.returncode == 0 else f"exit {done.returncode}"
        except subprocess.TimeoutExpired:
            status = f"timeout after {TIME_LIMIT_SECONDS} s"
        results.append((script.name, status, time.perf_counter() - start))
    print("\n===== summary")
    for name, status, seconds in results:
        print(f"  {name:<24} {status:<22} {seconds:8.1f} s")
    sys.exit(0 if all(status == "ok" for _, status, _ in results) else 1)


if __name__ == "__main__":
    main()
