"""World Info timings (SPEC §7): activation over a 1 000-entry book, the timed-state replay of a 200-message
sample conversation over it, and import of the largest corpus lorebook.

Run: .venv/bin/python bench/worldinfo.py   (medians of several runs, in CPU time of this process so other
load on the machine does not inflate them; targets: activation ≤ 5 ms per
assembly with 100 history messages, scan depth 10, recursion on; import ≤ 200 ms)
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_path import CORPUS

from engine.worldinfo import (
    ActivationRequest,
    ScanMessage,
    ScanTexts,
    WorldInfoSettings,
    activate,
    compile_book,
)
from engine.worldinfo.fields import normalise_entry
from engine.worldinfo.importer import parse_lorebook

RUNS = 21
ENTRIES = 1_000
MESSAGES = 100
REPLAY_MESSAGES = 200
TARGET_ACTIVATION_MS = 5.0
TARGET_IMPORT_MS = 200.0


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(size)]


def _prose(rng: random.Random, filler: list[str], names: list[str], length: int, mentions: int) -> str:
    words = [rng.choice(filler) for _ in range(length)]
    for _ in range(mentions):
        words[rng.randrange(length)] = rng.choice(names)
    return " ".join(words)


def make_book(rng: random.Random, words: list[str], filler: list[str]):
    """1 000 entries: 3–5 keys each (some multi-word, some CJK), a few constant, grouped, secondary keys;
    each entry's text mentions one other key now and then, so recursion has something to find."""
    entries = []
    for uid in range(ENTRIES):
        keys = [rng.choice(words) for _ in range(rng.randint(3, 5))]
        if uid % 10 == 0:
            keys.append(f"{rng.choice(words)} {rng.choice(words)}")
        if uid % 25 == 0:
            keys.append("魔法" + str(uid))
        raw = {
            "key": keys,
            "keysecondary": [rng.choice(words)] if uid % 7 == 0 else [],
            "content": _prose(rng, filler, words, 40, 1 if uid % 3 == 0 else 0),
            "constant": uid % 100 == 0,
            "order": rng.randint(0, 1000),
            "position": rng.choice([0, 1, 4]),
            "group": f"g{uid % 20}" if uid % 9 == 0 else "",
        }
        entries.append(normalise_entry(raw, uid, lambda _name: None))
    return compile_book("Bench", entries)


def make_history(rng: random.Random, words: list[str], filler: list[str]) -> tuple[ScanMessage, ...]:
    """100 messages of 60 words, each naming two or three things a key may match."""
    return tuple(
        ScanMessage(name="Ann" if i % 2 else "Mira", text=_prose(rng, filler, words, 60, 3), number=i + 1)
        for i in range(MESSAGES)
    )


def bench_activation() -> tuple[float, float, int, int]:
    from engine.worldinfo import entry_tokens as count_text

    rng = random.Random(7)
    words = _vocabulary(rng, 3_000)
    filler = _vocabulary(rng, 2_000)
    start = time.process_time()
    book = make_book(rng, words, filler)
    compile_ms = (time.process_time() - start) * 1000
    history = make_history(rng, words, filler)
    settings = WorldInfoSettings(scan_depth=10, recursive=True, budget_percent=100, context_size=200_000)
    times = []
    activated = passes = 0
    for seed in range(RUNS):
        request = ActivationRequest(
            books=[book],
            texts=ScanTexts(history=history),
            settings=settings,
            names={"user": "Ann", "char": "Mira"},
            chat_length=MESSAGES,
            seed=seed,
        )
        begin = time.process_time()
        result = activate(request, count_tokens=count_text)
        times.append((time.process_time() - begin) * 1000)
        activated, passes = len(result.activated), result.passes
    return statistics.median(times[1:]), compile_ms, activated, passes


def bench_replay() -> tuple[float, float]:
    """A 200-message conversation at the server defaults (scan depth 2) over the 1 000-entry book with
    one entry in 20 sticky and one in 30 on cooldown: the whole replay, then one more message (cached)."""
    from dataclasses import replace

    from engine.worldinfo import entry_tokens as count_text
    from engine.worldinfo import replay_state

    rng = random.Random(7)
    words = _vocabulary(rng, 3_000)
    filler = _vocabulary(rng, 2_000)
    book = make_book(rng, words, filler)
    timed = [
        replace(
            ce.entry,
            sticky=3 if ce.entry.uid % 20 == 0 else None,
            cooldown=2 if ce.entry.uid % 30 == 0 else None,
        )
        for ce in book.entries
    ]
    book = compile_book("Bench", timed)
    history = tuple(
        ScanMessage(name="Ann" if i % 2 else "Mira", text=_prose(rng, filler, words, 60, 3), number=i + 1)
        for i in range(REPLAY_MESSAGES)
    )
    request = ActivationRequest(
        books=[book], texts=ScanTexts(history=history), names={"user": "Ann", "char": "Mira"}
    )
    begin = time.process_time()
    replay_state(request, steps=REPLAY_MESSAGES - 1, count_tokens=count_text, cache_key="bench")
    whole_ms = (time.process_time() - begin) * 1000
    begin = time.process_time()
    replay_state(request, steps=REPLAY_MESSAGES, count_tokens=count_text, cache_key="bench")
    next_ms = (time.process_time() - begin) * 1000
    return whole_ms, next_ms


def bench_import() -> tuple[str, float, int]:
    files = sorted((CORPUS / "worldinfo").glob("*.json"), key=lambda p: p.stat().st_size)
    largest = files[-1]
    raw = largest.read_bytes()
    parse_lorebook(raw, filename=largest.name)
    times = []
    entries = 0
    for _ in range(RUNS):
        begin = time.process_time()
        entries = len(parse_lorebook(raw, filename=largest.name).entries)
        times.append((time.process_time() - begin) * 1000)
    return largest.name, statistics.median(times), entries


def main() -> None:
    median, compile_ms, activated, passes = bench_activation()
    print(
        f"activation: {ENTRIES} entries, {MESSAGES} messages, scan depth 10, recursion on: "
        f"median {median:.2f} ms per assembly ({activated} activated in {passes} passes); "
        f"target ≤ {TARGET_ACTIVATION_MS:.0f} ms, ratio {median / TARGET_ACTIVATION_MS:.2f}"
    )
    print(f"compile once per book version: {compile_ms:.1f} ms")
    whole_ms, next_ms = bench_replay()
    print(
        f"timed-state replay of a {REPLAY_MESSAGES}-message conversation (1 000 entries, scan depth 2): "
        f"{whole_ms:.0f} ms the first time, {next_ms:.1f} ms for one message more (steps cached)"
    )
    name, import_ms, entries = bench_import()
    print(
        f"import of the largest corpus lorebook ({name}, {entries} entries): median {import_ms:.1f} ms; "
        f"target ≤ {TARGET_IMPORT_MS:.0f} ms, ratio {import_ms / TARGET_IMPORT_MS:.2f}"
    )


if __name__ == "__main__":
    main()
