"""`python fidelity/cases/generate.py`: writes the generated lorebooks of the fidelity cases into
`fidelity/cases/data/lorebooks/` (our own text, made up from syllables; deterministic).

The large book imitates a real one of a few hundred entries: nearly all share one `order`, every
entry names two others, so they come in over many recursion steps, in an activation order unlike
their uid order; a few sit at other orders and positions.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent / "data" / "lorebooks"
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ren",
    "tas",
    "vo",
    "quil",
    "bar",
    "sen",
    "dor",
    "ith",
    "ulm",
    "pra",
    "nes",
    "gor",
    "fa",
]


def _names(count: int, rng: random.Random) -> list[str]:
    names: list[str] = []
    while len(names) < count:
        name = "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()
        if name not in names:
            names.append(name)
    return names


def entry(uid: int, **fields: Any) -> dict[str, Any]:
    """A World Info entry with SillyTavern's editor defaults and `fields`."""
    base: dict[str, Any] = {
        "uid": uid,
        "key": [],
        "keysecondary": [],
        "comment": f"entry {uid}",
        "content": "",
        "constant": False,
        "selective": True,
        "selectiveLogic": 0,
        "addMemo": True,
        "order": 100,
        "position": 0,
        "disable": False,
        "excludeRecursion": False,
        "preventRecursion": False,
        "delayUntilRecursion": False,
        "probability": 100,
        "useProbability": True,
        "depth": 4,
        "group": "",
        "groupOverride": False,
        "groupWeight": 100,
        "scanDepth": None,
        "caseSensitive": None,
        "matchWholeWords": None,
        "useGroupScoring": None,
        "automationId": "",
        "role": 0,
        "sticky": 0,
        "cooldown": 0,
        "delay": 0,
        "displayIndex": uid,
    }
    base.update(fields)
    return base


def large_book(count: int = 320, seed: int = 34, shuffled_keys: bool = False) -> dict[str, Any]:
    """`count` places; place k's text names places 2k+1 and 2k+2 (a tree walked by recursion); the
    uids are a permutation of the places, so evaluation order is not activation order."""
    rng = random.Random(seed)
    names = _names(count, rng)
    uids = list(range(count))
    rng.shuffle(uids)  # uids[k]: the uid of place k
    entries: dict[str, dict[str, Any]] = {}
    for k, name in enumerate(names):
        children = [names[c] for c in (2 * k + 1, 2 * k + 2) if c < count]
        text = f"{name} is an isle of the outer ring."
        if children:
            text += f" Ferries leave {name} for {' and '.join(children)}."
        fields: dict[str, Any] = {"key": [name], "content": text, "comment": f"isle {name}"}
        roll = rng.random()
        if roll < 0.06:
            fields["order"] = rng.choice([50, 150, 99, 101])
        if 0.06 <= roll < 0.12:
            fields["position"] = 1
        elif 0.12 <= roll < 0.16:
            fields.update(position=4, depth=rng.choice([0, 1, 2]), role=rng.choice([0, 1, 2]))
        entries[str(uids[k])] = entry(uids[k], **fields)
    keys = sorted(entries, key=int)
    if shuffled_keys:  # a file not written by SillyTavern: its keys out of numeric order
        rng.shuffle(keys)
    return {"entries": {key: entries[key] for key in keys}, "root": names[0]}


def main() -> None:
    for name, book in (
        ("isles-large.json", large_book()),
        ("isles-large-unsorted.json", large_book(seed=35, shuffled_keys=True)),
    ):
        root = book.pop("root")
        (HERE / name).write_text(json.dumps(book, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"{name}: {len(book['entries'])} entries, the chat must name {root}")


if __name__ == "__main__":
    main()
