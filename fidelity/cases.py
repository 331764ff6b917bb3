"""A fidelity case: the preset, card, lorebook, persona and chat both sides are given.

Cases live in `fidelity/cases/*.json`. Paths are either `corpus:<path>` (a file of the shared corpus,
third-party text: only hashes of what SillyTavern sent are kept) or relative to `fidelity/cases/`
(our own text: SillyTavern's messages are kept in full).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
EXPECTED = HERE / "expected"
CORPUS = Path(os.environ.get("TAVERNKEEP_CORPUS") or HERE.parent.parent / "shared" / "corpus")
USER_NAME = "User"

# SillyTavern's World Info settings for the case (its names), with the defaults the harness uses.
WORLD_INFO_DEFAULTS = {
    "depth": 2,
    "budget": 25,
    "budget_cap": 0,
    "recursive": True,
    "whole_words": True,
    "include_names": True,
    "case_sensitive": False,
    "max_recursion": 0,
    "min_activations": 0,
    "min_activations_depth_max": 0,
    "group_scoring": False,
}


@dataclass(frozen=True)
class Case:
    id: str
    covers: tuple[str, ...]
    preset: str
    card: str
    chat: tuple[dict[str, str], ...]
    lorebook: str | None = None
    preset_patch: dict[str, Any] = field(default_factory=dict)
    user: str = USER_NAME
    persona: str = ""
    generation: str = "normal"
    quiet_prompt: str = ""
    context: int | None = None  # a context window small enough to trim (tokens); None: unlocked
    reply: int = 300  # the reply's reserve, with `context`
    world_info: dict[str, Any] = field(default_factory=dict)
    # the chat's Author's Note, as our bucket document takes it (text, position, depth, role, interval)
    authors_note: dict[str, Any] = field(default_factory=dict)
    # A group chat (docs/groups.md): {"cards": [paths, in member order], "speaker": name, "muted":
    # [names], "mode": swap|join_exclude_muted|join_include_muted, "join_prefix", "join_suffix",
    # "scenario_override", "examples_override"}; `card` is then the speaker's card. Chat messages
    # carry their speaker's `name`; role system is a narrator line.
    group: dict[str, Any] = field(default_factory=dict)

    @property
    def inputs(self) -> tuple[str, ...]:
        """The case's input files (the preset, the cards, the lorebook)."""
        refs = (self.preset, self.card, self.lorebook, *self.group.get("cards", ()))
        return tuple(dict.fromkeys(ref for ref in refs if ref))

    @property
    def third_party(self) -> bool:
        """True when any input is a corpus file: SillyTavern's messages are kept as hashes only."""
        return any(p.startswith("corpus:") for p in self.inputs)

    @property
    def wi(self) -> dict[str, Any]:
        return {**WORLD_INFO_DEFAULTS, **self.world_info}

    def path(self, ref: str) -> Path:
        return CORPUS / ref.removeprefix("corpus:") if ref.startswith("corpus:") else CASES / ref

    def available(self) -> bool:
        return all(self.path(ref).is_file() for ref in self.inputs)

    def preset_data(self) -> dict[str, Any]:
        data = json.loads(self.path(self.preset).read_text(encoding="utf-8"))
        data.update(self.preset_patch)
        return data

    def card_data(self, ref: str | None = None) -> dict[str, Any]:
        return json.loads(self.path(ref or self.card).read_text(encoding="utf-8"))

    def char_name(self, ref: str | None = None) -> str:
        """The card's name (a group's speaker, unless `ref` names another card)."""
        if self.group and ref is None:
            return str(self.group["speaker"])
        card = self.card_data(ref)
        return str((card.get("data") or {}).get("name") or card.get("name") or "")

    def member_names(self) -> list[str]:
        """A group's member names, in member order."""
        return [self.char_name(ref) for ref in self.group.get("cards", ())]

    def expected_path(self) -> Path:
        return EXPECTED / f"{self.id}.json"


def load_cases(names: list[str] | None = None) -> list[Case]:
    """Every case file's cases, in file then list order; only `names` when given."""
    found: list[Case] = []
    for path in sorted(CASES.glob("*.json")):
        for raw in json.loads(path.read_text(encoding="utf-8")):
            raw = dict(raw)
            raw["covers"] = tuple(raw.get("covers", ()))
            raw["chat"] = tuple(raw["chat"])
            found.append(Case(**raw))
    ids = [case.id for case in found]
    if len(set(ids)) != len(ids):
        raise ValueError("Two fidelity cases share an id.")
    if names:
        unknown = set(names) - set(ids)
        if unknown:
            raise ValueError(f"No such case: {', '.join(sorted(unknown))}.")
        found = [case for case in found if case.id in names]
    return found
