"""Assembly speed against TomoriBot, the bot Tavernkeep replaces: every shared corpus preset, a 200-message history.

    .venv/bin/python bench/assemble.py [--runs N] [--rounds N] [--only NAME] [--no-scaling]

For every preset in the reference file (`../shared/perf/tomoribot-reference.tsv`, TomoriBot's
`reassembleWithPreset` in CPU ms on this machine kind), prints our whole assembly
(`assemble(count_tokens=False)`, CPU ms, median of rounds × runs), the reference and the ratio
ours / TomoriBot, with every node enabled ("all") and with the preset's own toggles ("own"); then the
median and worst ratios against the targets (≤ 0.8 median, ≤ 1.6 worst), and today's figures against
the reference run's own figures for our engine (its `ours_*` columns: the same engine on a machine
like the reference's reads about 1.0 there; docs/assembly.md gives the machine check). Each timed assembly
draws a fresh seed and renders the preset's macros, as a bot request without a seed does, as TomoriBot
does and as we do when the preset reads something that changed (the last message); the median ratios
with a fixed seed and the render reused (engine/macros/memo.py: the preset read nothing that changed)
follow, labelled. Then the floor (a
230-character preset, target ≤ 0.04 ms, issue 53), a fresh document (parse + first assembly), token counting
on its own (cold: every text counted; warm: from the count cache; target ≤ 0.3 ms per assembly), and
the history scaling table: 20, 200, 2 000 and 5 000 messages with every node on, for the floor preset
and nemoengine-8.2 (5 000 messages ≤ 30× the 200-message time; `--no-scaling` leaves it out).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from bench.corpus_path import CORPUS  # noqa: E402
from engine import CompiledPreset, assemble, compile_preset, parse_buckets  # noqa: E402
from engine.st_format import parse_preset  # noqa: E402
from engine.tokens import _counts, message_tokens  # noqa: E402

REFERENCE = Path(os.environ.get("TAVERNKEEP_REFERENCE") or CORPUS.parent / "perf" / "tomoribot-reference.tsv")
SPEAKERS = ("Mira", "Dax", "Ren")
FLOOR_PRESET = "st-openai-Default"
TARGET_MEDIAN, TARGET_WORST, TARGET_FLOOR_MS, TARGET_WARM_COUNT_MS = 0.8, 1.6, 0.04, 0.3
SCALING = (20, 200, 2000, 5000)  # history lengths for the scaling table
SCALING_PRESETS = (FLOOR_PRESET, "nemoengine-8.2")
TARGET_SCALING = 30  # 5 000 messages at most this many times the 200-message time


def long_document(messages: int = 200) -> dict:
    """The default sample with a `messages`-long conversation (the reference was measured on it)."""
    data = json.loads((ROOT / "assembly" / "default_buckets.json").read_text(encoding="utf-8"))
    history = []
    for i in range(messages):
        if i % 3 == 2:
            history.append(
                {
                    "role": "assistant",
                    "name": "Tomori",
                    "content": f"*turns a page of the ledger* Entry {i}: the answer hides in plain sight, as riddles do. Try again.",
                }
            )
        else:
            history.append(
                {
                    "role": "user",
                    "name": SPEAKERS[i % 3],
                    "content": f"Message {i}: Quill checks the door again and mutters about moonrise and tallies.",
                }
            )
    data["history"] = history
    return data


def reference() -> dict[str, dict[str, float]]:
    """TomoriBot's figures per preset name, from the reference file."""
    lines = [line for line in REFERENCE.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    header = lines[0].split("\t")
    rows = {}
    for line in lines[1:]:
        cells = line.split("\t")
        rows[cells[0]] = {key: float(value) for key, value in zip(header[1:], cells[1:], strict=True)}
    return rows


def presets(path: Path) -> dict[str, CompiledPreset]:
    """The file's preset with every node enabled ("all") and with its own toggles ("own")."""
    parsed = parse_preset(path.read_bytes(), filename=path.name)
    every = [dataclasses.replace(node, enabled=True) for node in parsed.nodes]
    return {
        toggles: compile_preset(
            preset_id=1, name=parsed.name, injection_style="merge", settings=parsed.settings, nodes=nodes
        )
        for toggles, nodes in (("all", every), ("own", parsed.nodes))
    }


_seeds = random.Random(2026)


def fresh_seed() -> int:
    """A new seed for every call, as a bot request without one gets (docs/assembly.md#the-bucket-document)."""
    return _seeds.randrange(2**31)


def rendering(preset: CompiledPreset) -> CompiledPreset:
    """`preset` with its kept renders dropped (engine.assemble.rearrange.render_memo keeps them in its memo),
    so that the next assembly renders its macros."""
    preset.memo.renders.pop("normal", None)
    return preset


def cpu_ms(work: Callable[[], object], *, runs: int, rounds: int) -> float:
    """CPU milliseconds of one call: the median over `rounds` of each round's median of `runs` calls."""
    work()  # warm-up
    medians = []
    for _ in range(rounds):
        times = []
        for _ in range(runs):
            start = time.process_time()
            work()
            times.append((time.process_time() - start) * 1000)
        medians.append(statistics.median(times))
    return statistics.median(medians)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", help="one preset name")
    parser.add_argument("--no-scaling", action="store_true", help="leave out the history scaling table")
    args = parser.parse_args()
    data = long_document()
    doc = parse_buckets(data)
    start = time.perf_counter()
    message_tokens("load the encoding tables once")
    table_load = (time.perf_counter() - start) * 1000
    ref = reference()
    names = [args.only] if args.only else list(ref)
    ratios: dict[str, list[float]] = {"all": [], "own": []}
    then: dict[str, list[float]] = {"all": [], "own": []}  # ours now / ours in the reference's run
    reused: dict[str, list[float]] = {"all": [], "own": []}
    cold_counts, warm_counts = [], []
    print(
        f"{'preset':38} {'chars':>7} {'all ms':>8} {'tb':>8} {'ratio':>6}   {'own ms':>8} {'tb':>8} {'ratio':>6}"
    )
    for name in names:
        compiled = presets(CORPUS / "pm" / f"{name}.json")
        cells = []
        for toggles in ("all", "own"):
            preset = compiled[toggles]
            ours = cpu_ms(
                lambda preset=preset: assemble(  # type: ignore[misc]  # mypy cannot type a default-bound lambda
                    doc, preset=rendering(preset), count_tokens=False, seed=fresh_seed()
                ),
                runs=args.runs,
                rounds=args.rounds,
            )
            theirs = ref[name][f"tb_reassembly_{toggles}"]
            ratios[toggles].append(ours / theirs)
            then[toggles].append(ours / ref[name][f"ours_assemble_{toggles}"])
            kept = cpu_ms(  # a fixed seed and the kept render: what a request that changed nothing costs
                partial(assemble, doc, preset=preset, count_tokens=False, seed=1),
                runs=args.runs,
                rounds=args.rounds,
            )
            reused[toggles].append(kept / theirs)
            cells.append(f"{ours:8.3f} {theirs:8.3f} {ours / theirs:6.2f}")
        result = assemble(doc, preset=compiled["own"], count_tokens=False)
        _counts.clear()
        start = time.process_time()
        for message in result.messages:
            message_tokens(message.content)
        cold_counts.append((time.process_time() - start) * 1000)
        warm_counts.append(cpu_ms(partial(assemble_counts, result), runs=args.runs, rounds=args.rounds))
        print(f"{name:38} {int(ref[name]['chars']):7d} {cells[0]}   {cells[1]}")

    print()
    print(
        f"presets: {len(names)}; 200-message history; CPU ms, median of {args.rounds} rounds x {args.runs} runs"
    )
    print(
        "against the reference run's own figures for our engine (its `ours_*` columns, the engine as it was "
        f"then): median now/then, every node on {statistics.median(then['all']):.2f}, own toggles "
        f"{statistics.median(then['own']):.2f} (the same engine reads ~1.0 on a machine like the reference's; "
        "docs/assembly.md gives today's machine check)"
    )
    for toggles, label in (("all", "every node on"), ("own", "own toggles  ")):
        values = ratios[toggles]
        worst = max(range(len(values)), key=values.__getitem__)
        print(
            f"ratio ours/TomoriBot, {label}: median {statistics.median(values):.2f} (target <= {TARGET_MEDIAN}), "
            f"worst {values[worst]:.2f} {names[worst]} (target <= {TARGET_WORST})"
        )
    print(
        "with a fixed seed and the render reused (nothing the preset read changed): median ratio, every node on "
        f"{statistics.median(reused['all']):.2f}, own toggles {statistics.median(reused['own']):.2f}"
    )
    floor_preset = presets(CORPUS / "pm" / f"{FLOOR_PRESET}.json")["own"]
    floor = cpu_ms(
        lambda: assemble(doc, preset=rendering(floor_preset), count_tokens=False, seed=fresh_seed()),
        runs=50,
        rounds=3,
    )
    print(f"floor ({FLOOR_PRESET}, 230 chars): {floor:.3f} ms (target <= {TARGET_FLOOR_MS} ms)")
    fresh = cpu_ms(
        lambda: assemble(
            parse_buckets(data), preset=rendering(floor_preset), count_tokens=False, seed=fresh_seed()
        ),
        runs=50,
        rounds=3,
    )
    print(f"fresh document on the same preset (parse_buckets + first assembly): {fresh:.3f} ms")
    print(f"encoding tables load (once per process): {table_load:.0f} ms")
    print(
        f"token counting per assembly, cold cache: median {statistics.median(cold_counts):.2f} ms, "
        f"max {max(cold_counts):.2f} ms"
    )
    print(
        f"token counting per assembly, warm cache: median {statistics.median(warm_counts):.3f} ms, "
        f"max {max(warm_counts):.3f} ms (target <= {TARGET_WARM_COUNT_MS} ms)"
    )
    if not args.no_scaling:
        scaling()


def scaling() -> None:
    """Assembly time against the history's length, every node on, a fresh seed and render per call."""
    print()
    print("history scaling, every node on (CPU ms per assembly; per message: the time over the messages)")
    for name in SCALING_PRESETS:
        preset = presets(CORPUS / "pm" / f"{name}.json")["all"]
        times = {}
        for size in SCALING:
            doc = parse_buckets(long_document(size))
            times[size] = cpu_ms(
                lambda doc=doc, preset=preset: assemble(  # type: ignore[misc]  # as above
                    doc, preset=rendering(preset), count_tokens=False, seed=fresh_seed()
                ),
                runs=15 if size <= 2000 else 7,
                rounds=3,
            )
        cells = "  ".join(
            f"{size}: {ms:.3f} ms ({ms / size * 1000:.2f} us/msg)" for size, ms in times.items()
        )
        ratio = times[SCALING[-1]] / times[200]
        print(f"{name:20} {cells}")
        print(f"{'':20} {SCALING[-1]} messages / 200 messages: {ratio:.1f}x (target <= {TARGET_SCALING}x)")


def assemble_counts(result) -> int:
    return sum(message_tokens(message.content) for message in result.messages)


if __name__ == "__main__":
    main()
