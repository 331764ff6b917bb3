"""Regex script speed (docs/regex.md): NemoEngine v10's 118 scripts on a 200-message history and on a
4 000-character reply.

    .venv/bin/python bench/regex.py [--runs N]

Prints the compile time of the 118 scripts (once per preset version, at cache time), the prompt
step alone (promptOnly scripts over the history, per assembly), a whole assembly with and without
the scripts, and reply cleaning (stored + display + reasoning), each as a median of N runs, with
the targets: ≤ 5 ms of regex work per assembly, ≤ 2 ms per reply.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from bench.corpus_path import CORPUS  # noqa: E402
from engine.assemble import assemble  # noqa: E402
from engine.buckets import parse_buckets  # noqa: E402
from engine.compiled import compile_preset  # noqa: E402
from engine.regex import (  # noqa: E402
    RegexRequest,
    apply_to_history,
    clean_reply,
    compile_scripts,
    scripts_of_preset,
    switched,
)
from engine.st_format import parse_preset  # noqa: E402

NEMO = CORPUS / "pm" / "nemoengine-v10.json"
SPEAKERS = ("Mira", "Dax", "Ren")
NARRATIVE = (
    "Rain drummed on the tavern's tin roof while Tomori wiped the same glass for the third time, "
    'watching the door. "You\'re late," she said, though there was no anger in it. Quill shrugged '
    "off a soaked cloak and hung it by the fire, where it began to steam. The ledger lay open on the "
    "bar, its columns of tallies running off the page and onto the next. "
)
TRACKER = (
    '<st-tracker type="status" title="Scene" icon="🕯" accent="#c90">\n'
    '<st-row k="Location" v="The Lantern tavern"/>\n<st-row k="Mood" v="wary"/>\n'
    '<st-bar k="Trust" v="40" l="guarded"/>\n</st-tracker>'
)
THINKING = (
    "<thinking>\nQuill is late again; Tomori should tease, not scold. Keep the ledger in view.\n</thinking>\n"
)


def history_document(messages: int = 200) -> dict:
    """The default sample with 200 messages; NemoEngine-style assistant turns (thinking, trackers)."""
    data = json.loads((ROOT / "assembly" / "default_buckets.json").read_text(encoding="utf-8"))
    history = []
    for i in range(messages):
        if i % 2:
            content = (THINKING if i % 4 == 1 else "") + NARRATIVE + f"Entry {i}.\n" + TRACKER
            history.append({"role": "assistant", "name": "Tomori", "content": content})
        else:
            content = f"Message {i}: Quill checks the door again and mutters about moonrise and tallies."
            history.append({"role": "user", "name": SPEAKERS[i % 3], "content": content})
    data["history"] = history
    return data


def reply_text(length: int = 4000) -> str:
    body = NARRATIVE * (length // len(NARRATIVE) + 1)
    text = THINKING + body[: length - len(THINKING) - len(TRACKER) - 1] + "\n" + TRACKER
    return text[:length]


def median_ms(action: Callable[[], object], runs: int) -> tuple[float, float]:
    """(median wall time, median CPU time of this process) in ms; on a shared machine the CPU time
    is the fairer figure (wall time includes waiting for a core)."""
    action()  # warm-up
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        action()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    runs = parser.parse_args().runs
    if not NEMO.exists():
        sys.exit(f"nemoengine-v10 is not in the corpus at {CORPUS}")
    raw = NEMO.read_bytes()
    data = json.loads(raw)
    start = time.perf_counter()
    scripts = compile_scripts(scripts_of_preset(data).scripts)
    compile_ms = (time.perf_counter() - start) * 1000
    running = switched(scripts, {})
    parsed = parse_preset(raw, filename=NEMO.name)
    preset = compile_preset(
        preset_id=1, name=parsed.name, injection_style="merge", settings=parsed.settings, nodes=parsed.nodes
    )
    doc = parse_buckets(history_document())
    request = RegexRequest(seed=7, user="Mira", char="Tomori")
    pairs = [(m.role, m.content) for m in doc.history]
    reply = reply_text()

    prompt_step = median_ms(lambda: apply_to_history(running, pairs, request), runs)
    with_scripts = median_ms(
        lambda: assemble(doc, preset=preset, regex_scripts=running, count_tokens=False), runs
    )
    without = median_ms(lambda: assemble(doc, preset=preset, regex_scripts=(), count_tokens=False), runs)
    cleaning = median_ms(lambda: clean_reply(running, reply, request), runs)
    changed = len(apply_to_history(running, pairs, request).changed_by)
    cleaned = clean_reply(running, reply, request)

    print(f"scripts: {len(scripts)} ({sum(1 for s in scripts if s.active)} compile; {len(running)} enabled)")
    print(f"compile all scripts (once per preset version): {compile_ms:.1f} ms")
    print(f"history: {len(pairs)} messages, {changed} changed by promptOnly scripts; {runs} runs, medians")
    print(f"{'':34} {'wall ms':>8} {'cpu ms':>8}")
    print(f"{'prompt step alone':34} {prompt_step[0]:8.2f} {prompt_step[1]:8.2f}   target <= 5 ms")
    print(f"{'assembly with the scripts':34} {with_scripts[0]:8.2f} {with_scripts[1]:8.2f}")
    print(f"{'assembly without scripts':34} {without[0]:8.2f} {without[1]:8.2f}")
    print(f"{'  the scripts add':34} {with_scripts[0] - without[0]:8.2f} {with_scripts[1] - without[1]:8.2f}")
    print(
        f"{f'reply cleaning, {len(reply)} chars':34} {cleaning[0]:8.2f} {cleaning[1]:8.2f}   target <= 2 ms"
    )
    print(
        f"  the reply: {len(cleaned.applied)} script runs changed it, display {len(cleaned.display)} chars "
        f"(trackers as HTML), {len(cleaned.errors)} errors"
    )
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
