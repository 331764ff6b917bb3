"""What an active card changes in an assembly (docs/cards.md).

- The bucket document's empty fields are filled from the card; the bot's non-empty values win.
- The card's `system_prompt` replaces the preset's `main` text and `post_history_instructions` the
  `jailbreak` text, unless that node forbids overrides; the first `{{original}}` inside them is the
  text they replace, the later ones render empty.
- The depth prompt is a depth injection with its role; the scenario fills the `scenario` marker.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from engine.buckets import BucketDocument, SampleDialogue
from engine.macros import CompiledText, MacroEnv, RenderOutput, compiled_once, render_texts

from .card import Card

# preset node identifier -> the card field that replaces its text
OVERRIDES = {"main": "system_prompt", "jailbreak": "post_history_instructions"}
SAMPLE_START = "<START>"
_START = re.compile(re.escape(SAMPLE_START), re.IGNORECASE)
_ORIGINAL = re.compile(r"\{\{original\}\}", re.IGNORECASE)
_DEFAULT_CHAR = next(f.default for f in fields(BucketDocument) if f.name == "char_name")


# The fields SillyTavern renders with the whole macro engine before anything else
# (docs/assembly.md#what-sillytavern-118-corrected); the system prompt and post-history instructions are
# rendered where they replace a node.
RENDERED_FIELDS = ("description", "personality", "scenario", "mes_example")
CLEANED_FIELDS = (*RENDERED_FIELDS, "system_prompt", "post_history_instructions")


def prepared_card(
    card: Card,
    *,
    env: MacroEnv,
    seed: int,
    variables: Mapping[str, Any],
    global_variables: Mapping[str, Any],
) -> tuple[Card, RenderOutput | None]:
    """The card's fields as SillyTavern reads them: trimmed, macros rendered (identity macros stay
    deferred), carriage returns removed; and the render (None when no field held a macro)."""
    texts = {name: getattr(card, name).strip() for name in CLEANED_FIELDS}
    depth = card.depth_prompt
    if depth is not None:
        texts["depth_prompt"] = depth.prompt.strip()
    wanted = [
        (name, texts[name]) for name in (*RENDERED_FIELDS, "depth_prompt") if "{{" in texts.get(name, "")
    ]
    render = None
    if wanted:
        render = render_texts(
            wanted,
            env=env,
            seed=seed,
            variables=variables,
            global_variables=global_variables,
        )
        texts.update((segment.key, segment.text) for segment in render.segments)
    texts = {name: text.replace("\r", "") for name, text in texts.items()}
    changes: dict[str, Any] = {
        name: texts[name] for name in CLEANED_FIELDS if texts[name] != getattr(card, name)
    }
    if depth is not None and texts["depth_prompt"] != depth.prompt:
        changes["depth_prompt"] = replace(depth, prompt=texts["depth_prompt"])
    return (replace(card, **changes) if changes else card), render


def card_env(env: MacroEnv, card: Card) -> MacroEnv:
    """`env` with the card's fields for SillyTavern 1.18's character macros ({{charInstruction}}, …);
    `card` is the prepared card (its system prompt and instructions already trimmed)."""
    depth = card.depth_prompt
    return replace(
        env,
        char_prompt=card.system_prompt,
        char_instruction=card.post_history_instructions,
        char_depth_prompt=depth.prompt if depth is not None else "",
        creator_notes=card.creator_notes.strip().replace("\r", ""),
        first_message=card.first_mes.strip().replace("\r", ""),
        alternate_greetings=tuple(g.strip().replace("\r", "") for g in card.alternate_greetings),
        char_version=card.character_version,
    )


def fill_document(doc: BucketDocument, card: Card) -> BucketDocument:
    """`doc` with its empty fields taken from the card (names.char, persona, personality, samples)."""
    changes: dict[str, Any] = {}
    if card.name.strip() and doc.char_name in ("", _DEFAULT_CHAR):
        changes["char_name"] = card.name
    if card.description.strip() and not doc.persona_prompt.strip():
        changes["persona_prompt"] = card.description
    if card.personality.strip() and not any(p.strip() for p in doc.personality):
        changes["personality"] = (card.personality,)
    if card.mes_example.strip() and not doc.sample_dialogues:
        changes["sample_dialogues"] = example_blocks(card.mes_example)
        changes["sample_dialogues_raw"] = card.mes_example.strip()
    if card.scenario.strip() and hasattr(doc, "scenario") and not str(getattr(doc, "scenario", "")).strip():
        changes["scenario"] = card.scenario
    return replace(doc, **changes) if changes else doc


def example_blocks(mes_example: str) -> tuple[SampleDialogue, ...]:
    """A card's example messages as SillyTavern reads them (docs/assembly.md#what-sillytavern-118-corrected):
    text that does not open with `<START>` gets one, then each `<START>` block (any case), trimmed, is one
    dialogue; empty blocks
    are none."""
    text = mes_example.strip()
    if not text or text == SAMPLE_START:
        return ()
    if not text.startswith(SAMPLE_START):
        text = f"{SAMPLE_START}\n{text}"
    blocks = _START.split(text)[1:]
    return tuple(SampleDialogue("", "", block=block.strip()) for block in blocks if block.strip())


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
    # SillyTavern 1.18 fills `{{original}}` once per field (MacroEnvBuilder.js): the later ones render empty
    first = _ORIGINAL.search(text)
    if first is not None:
        text = text[: first.start()] + original + _ORIGINAL.sub("", text[first.end() :])
    return NodeOverride(field=field, template=compiled_once(text))
