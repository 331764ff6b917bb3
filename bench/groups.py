"""A group speaker's assembly against the solo assembly of the same preset and card (docs/groups.md).

    .venv/bin/python bench/groups.py [--runs N] [--rounds N] [--preset NAME]

For one shared corpus preset (default the one with most nodes), with its own toggles, and the
speaker's card: the solo assembly (the card alone), then the same card speaking in a group of
three, in `swap` and in `join_include_muted` with a join prefix; CPU ms (median of rounds × runs,
`assemble(count_tokens=False)`, a fresh seed each time) and the ratio group / solo against the
target (≤ 1.2×). The history is 200 messages, its speakers the members, users and a narrator (in
the solo document, the narrator's lines are a user's).

Then who answers next (`next_speakers`, the `next` endpoint's work) for a message as large as the
endpoint's body limit (250 KB of words) to groups of 2 and 32 members: CPU ms per call, which the
body limit bounds (docs/groups.md#the-api).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from bench.assemble import cpu_ms, fresh_seed, presets  # noqa: E402
from bench.corpus_path import CORPUS  # noqa: E402
from engine import assemble, parse_buckets  # noqa: E402
from engine.cards import Card, read_card  # noqa: E402
from engine.groups import Group, GroupMember  # noqa: E402
from engine.groups.next import ChatLine, next_speakers  # noqa: E402

CARDS = ROOT / "fidelity" / "cases" / "data" / "cards"
MEMBERS = ("tavern-barkeep.json", "tavern-bard.json", "tavern-guard.json")
SPEAKER = "Wren"
TARGET = 1.2


def history(messages: int = 200) -> list[dict[str, str]]:
    """A group chat: members, two users and a narrator taking turns."""
    turns = [
        ("user", "Ann", "Another round, and is there news from the road?"),
        ("assistant", "Old Tom", "*slides a mug over* Coin first. The road is flooded past the mill."),
        ("user", "Mara", "Then we wait out the rain here."),
        ("system", "Narrator", "Thunder rolls; the shutters rattle."),
        ("assistant", "Wren", "A song for the stranded, then! *tunes the lute*"),
        ("assistant", "Brask", "Keep it quiet. Some of us are off duty."),
    ]
    return [
        {"role": role, "name": name, "content": f"{text} ({i})"}
        for i, (role, name, text) in ((i, turns[i % len(turns)]) for i in range(messages))
    ]


def largest_preset() -> Path:
    """The shared preset with most nodes (files that are not JSON, as the corpus's corrupt one, aside)."""
    sizes = {}
    for path in sorted((CORPUS / "pm").glob("*.json")):
        try:
            sizes[path] = len(json.loads(path.read_text(encoding="utf-8")).get("prompts") or [])
        except ValueError:
            continue
    return max(sizes, key=sizes.__getitem__)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--preset", help="A corpus preset's file name without .json.")
    args = parser.parse_args()
    path = CORPUS / "pm" / f"{args.preset}.json" if args.preset else largest_preset()
    preset = presets(path)["own"]
    cards = [read_card((CARDS / name).read_bytes()).card for name in MEMBERS]
    speaker = next(card for card in cards if card.name == SPEAKER)
    chat = history()
    # the same 200 messages for one character: the narrator's lines as a user's
    solo_history = [{**m, "role": "user"} if m["role"] == "system" else m for m in chat]
    solo = parse_buckets({"names": {"user": "Ann", "char": SPEAKER}, "history": solo_history})
    grouped = parse_buckets(
        {
            "names": {"user": "Ann", "char": SPEAKER},
            "history": chat,
            "group": {"name": "Party", "speaker": SPEAKER},
        }
    )

    def solo_run() -> object:
        return assemble(solo, preset=preset, card=speaker, seed=fresh_seed(), count_tokens=False)

    print(f"preset {path.stem} ({len(preset.nodes)} nodes), {len(chat)} messages, speaker {SPEAKER}")
    base = cpu_ms(solo_run, runs=args.runs, rounds=args.rounds)
    print(f"solo                    {base:8.2f} ms")
    for mode, prefix in (("swap", ""), ("join_include_muted", "[{{char}}'s <FIELDNAME>: ")):
        members = tuple(GroupMember(card, card.name == "Brask") for card in cards)
        group = Group("Party", members, mode=mode, join_prefix=prefix, join_suffix="]" if prefix else "")

        def group_run(group: Group = group) -> object:
            return assemble(
                grouped, preset=preset, card=speaker, group=group, seed=fresh_seed(), count_tokens=False
            )

        took = cpu_ms(group_run, runs=args.runs, rounds=args.rounds)
        ratio = took / base if base else float("inf")
        verdict = "within" if ratio <= TARGET else "over"
        print(f"group {mode:18s}{took:8.2f} ms  {ratio:5.2f}x  ({verdict} the {TARGET}x target)")
    next_for_a_large_message(cards[0], runs=max(1, args.runs // 10), rounds=args.rounds)


def next_for_a_large_message(card: Card, *, runs: int, rounds: int) -> None:
    words = ["lantern", "harbor", "member", "bold", "the", "ale", "storm", *(f"w{i}" for i in range(500))]
    text = " ".join(words[(i * 7919) % len(words)] for i in range(45_000))[:250_000]
    message = [ChatLine(role="user", name="Ann", content=text)]
    for size in (2, 32):
        members = tuple(GroupMember(replace(card, name=f"Member {i} the Bold")) for i in range(size))
        group = Group("Crowd", members)
        took = cpu_ms(partial(next_speakers, group, message, 1), runs=runs, rounds=rounds)
        print(f"next, 250 KB message, {size:2d} members {took:8.2f} ms")


if __name__ == "__main__":
    main()
