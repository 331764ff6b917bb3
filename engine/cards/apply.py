"""What an active card changes in an assembly (SPEC §8).

- The bucket document's empty fields are filled from the card; the bot's non-empty values win.
- The card's `system_prompt` replaces the preset's `main` text and `post_history_instructions` the
  `jailbreak` text, unless that node forbids overrides; `{{original}}` inside them (first occurrence)
  is the text they replace.
- The depth prompt is a depth injection with its role; the scenario fills the `scenario` marker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from functools import lru_cache

from engine.buckets import BucketDocument, SampleDialogue
from engine.macros import CompiledText, compile_text

from .card import Card

# preset node identifier -> the card field that replaces its text
OVERRIDES = {"main": "system_prompt", "jailbreak": "post_history_instructions"}
SAMPLE_START = "<START>"
_ORIGINAL = re.compile(r"\{\{original\}\}", re.IGNORECASE)
_DEFAULT_CHAR = next(f.default for f in fields(BucketDocument) if f.name == "char_name")


def fill_document(doc: BucketDocument, card: Card) -> BucketDocument:
    """`doc` with its empty fields taken from the card (names.char, persona, personality, samples)."""
    changes: dict[str, object] = {}
    if card.name.strip() and doc.char_name in ("", _DEFAULT_CHAR):
        changes["char_name"] = card.name
    if card.description.strip() and not doc.persona_prompt.strip():
        changes["persona_prompt"] = card.description
    if card.personality.strip() and not any(p.strip() for p in doc.personality):
        changes["personality"] = (card.personality,)
    if card.mes_example.strip() and not doc.sample_dialogues:
        changes["sample_dialogues"] = sample_dialogues(card.mes_example)
    if card.scenario.strip() and hasattr(doc, "scenario") and not str(getattr(doc, "scenario", "")).strip():
        changes["scenario"] = card.scenario
    return replace(doc, **changes) if changes else doc


def sample_dialogues(mes_example: str) -> tuple[SampleDialogue, ...]:
    """A card's example messages as dialogue pairs: each `<START>` block, each user turn with the
    character's answer after it (lines without a speaker continue the turn before them)."""
    pairs: list[SampleDialogue] = []
    for block in mes_example.split(SAMPLE_START):
        user: list[str] = []
        char: list[str] = []
        speaker = None
        for line in block.strip().splitlines():
            lowered = line.lstrip().lower()
            if lowered.startswith(("{{user}}:", "<user>:")):
                if char:  # a new exchange starts
                    pairs.append(SampleDialogue("\n".join(user), "\n".join(char)))
                    user, char = [], []
                speaker, line = user, line.split(":", 1)[1].strip()
            elif lowered.startswith(("{{char}}:", "<bot>:")):
                speaker, line = char, line.split(":", 1)[1].strip()
            if speaker is None:
                speaker = char
            speaker.append(line)
        if user or char:
            pairs.append(SampleDialogue("\n".join(user), "\n".join(char)))
    return tuple(pair for pair in pairs if pair.user.strip() or pair.char.strip())


@dataclass(frozen=True, slots=True)
class NodeOverride:
    field: str  # the card field that replaced the node's text
    template: CompiledText


def node_override(identifier: str, original: str, card: Card, *, forbidden: bool) -> NodeOverride | None:
    """The card's replacement for a `main` or `jailbreak` node's text, or None when it keeps its own."""
    field = OVERRIDES.get(identifier)
    if field is None or forbidden:
        return None
    text = getattr(card, field)
    if not text.strip():
        return None
    text = _ORIGINAL.sub(lambda _: original, text, count=1)
    return NodeOverride(field=field, template=_compiled(text))


@lru_cache(maxsize=512)
def _compiled(text: str) -> CompiledText:
    return compile_text(text)
