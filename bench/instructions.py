"""Instructions per assembly (callgrind), which do not depend on the machine's load.

    .venv/bin/python bench/instructions.py PRESET[:all|own] ... [--calls N] [--root DIR]

For each preset (every node on by default, `:own` for its own toggles) the script runs this file under
`valgrind --tool=callgrind` twice, with `PYTHONHASHSEED=0`: once doing everything but the timed calls
(parse, compile, a warm-up of three assemblies), once doing that and `--calls` assemblies more (20 by
default), each with a fresh seed and its macros rendered, as in bench/assemble.py; the difference over
`--calls` is one assembly's instructions. `--root` runs another checkout's engine (an older commit's
worktree) with this script, for a side by side comparison.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve()


def child(root: Path, name: str, toggles: str, calls: int) -> None:
    """Inside valgrind: set up, warm up, then `calls` assemblies."""
    sys.path.insert(0, str(root))
    sys.path.insert(0, str(root / "bench"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import random

    from assemble import long_document, presets, rendering  # type: ignore[import-not-found]
    from corpus_path import CORPUS  # type: ignore[import-not-found]

    from engine import assemble, parse_buckets

    doc = parse_buckets(long_document())
    preset = presets(CORPUS / "pm" / f"{name}.json")[toggles]
    seeds = random.Random(2026)
    for _ in range(3 + calls):
        rendering(preset)  # the next assembly renders its macros (the checkout's own way to say so)
        assemble(doc, preset=preset, count_tokens=False, seed=seeds.randrange(2**31))


def collected(root: Path, name: str, toggles: str, calls: int) -> int:
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        str(HERE),
        "--child",
        f"{name}:{toggles}",
        "--calls",
        str(calls),
        "--root",
        str(root),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(done.stderr[-2000:])
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("presets", nargs="+", help="NAME or NAME:own / NAME:all")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--root", type=Path, default=HERE.parents[1])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        name, toggles = args.presets[0].split(":")
        child(args.root.resolve(), name, toggles, args.calls)
        return
    for spec in args.presets:
        name, _, toggles = spec.partition(":")
        toggles = toggles or "all"
        base = collected(args.root.resolve(), name, toggles, 0)
        total = collected(args.root.resolve(), name, toggles, args.calls)
        per_call = (total - base) / args.calls
        print(
            f"{name} ({toggles}): {per_call / 1e6:.3f} M instructions per assembly ({args.root})", flush=True
        )


if __name__ == "__main__":
    main()
