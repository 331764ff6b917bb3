"""Hashes of today's assembled output for every shared corpus preset, so a speed-up cannot change it.

For each preset: every node enabled ("all") and the preset's own toggles ("own"), each injection
style, three seeds, one 200-message conversation (the benchmark's). A behaviour change updates the
hashes in a commit of its own that says why:

    .venv/bin/python -m tests.engine.assemble.corpus_hashes --update
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from engine import BucketDocument, CompiledPreset, assemble, compile_preset, parse_buckets
from engine.st_format import ImportRefused, parse_preset
from tests.corpus import CORPUS

HASHES = Path(__file__).with_name("corpus_hashes.json")
DEFAULT_BUCKETS = Path(__file__).resolve().parents[3] / "assembly" / "default_buckets.json"
TOGGLES = ("all", "own")
STYLES = ("merge", "standalone")
SEEDS = (1, 42, 2_000_000_011)
SPEAKERS = ("Mira", "Dax", "Ren")


def corpus_files() -> list[Path]:
    """The shared presets the benchmarks measure: every `pm/` and `legacy/` file."""
    return sorted([*CORPUS.glob("pm/*.json"), *CORPUS.glob("legacy/*.json")])


def long_document(messages: int = 200) -> BucketDocument:
    """The default sample with a `messages`-long conversation (the one bench/assemble.py times)."""
    data = json.loads(DEFAULT_BUCKETS.read_text(encoding="utf-8"))
    history = []
    for i in range(messages):
        if i % 3 == 2:
            content = f"*turns a page of the ledger* Entry {i}: the answer hides in plain sight, as riddles do. Try again."
            history.append({"role": "assistant", "name": "Tomori", "content": content})
        else:
            content = f"Message {i}: Quill checks the door again and mutters about moonrise and tallies."
            history.append({"role": "user", "name": SPEAKERS[i % 3], "content": content})
    data["history"] = history
    return parse_buckets(data)


def presets_of(path: Path) -> dict[str, CompiledPreset] | None:
    """The file's preset with every node enabled and with its own toggles; None when refused."""
    try:
        parsed = parse_preset(path.read_bytes(), filename=path.name)
    except ImportRefused:
        return None
    every = [dataclasses.replace(node, enabled=True) for node in parsed.nodes]
    return {
        toggles: compile_preset(
            preset_id=1, name=parsed.name, injection_style="merge", settings=parsed.settings, nodes=nodes
        )
        for toggles, nodes in (("all", every), ("own", parsed.nodes))
    }


def output_hash(preset: CompiledPreset, doc: BucketDocument, *, style: str, seed: int) -> str:
    """A short SHA-256 of what a caller sees: messages, warnings, omissions, final variables."""
    result = assemble(doc, preset=preset, style=style, seed=seed, count_tokens=False)
    seen: dict[str, Any] = {
        "messages": [m.to_dict() for m in result.messages],
        "warnings": list(result.warnings),
        "omitted": [o.to_dict() for o in result.omitted],
        "variables": result.variables,
        "global_variables": result.global_variables,
    }
    text = json.dumps(seen, ensure_ascii=False, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def hashes_for(path: Path, doc: BucketDocument) -> dict[str, str]:
    """Every case of one file, keyed `toggles/style/seed`; {} when the importer refuses the file."""
    presets = presets_of(path)
    if presets is None:
        return {}
    return {
        f"{toggles}/{style}/{seed}": output_hash(presets[toggles], doc, style=style, seed=seed)
        for toggles in TOGGLES
        for style in STYLES
        for seed in SEEDS
    }


def main(argv: list[str]) -> None:
    if argv != ["--update"]:
        sys.exit("usage: python -m tests.engine.assemble.corpus_hashes --update")
    doc = long_document()
    table = {path.relative_to(CORPUS).as_posix(): hashes_for(path, doc) for path in corpus_files()}
    HASHES.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{sum(len(v) for v in table.values())} hashes of {len(table)} files written to {HASHES}")


if __name__ == "__main__":
    main(sys.argv[1:])
