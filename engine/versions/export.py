"""A version as a SillyTavern Chat Completion preset: the prompts and the prompt order SillyTavern
reads, so it imports back with the same order, toggles and texts (and back into us with the same nodes).

For a Prompt Manager upload the rest of the file (sampler settings, extensions…) is kept as it came
(secrets already blanked) and only `prompts` and `prompt_order` are replaced; other shapes become a
plain Prompt Manager preset. Post-history keys are dropped: their nodes are already in the list, and
importing them again would add them twice once edited. Legacy prefix/suffix text around a block has
no SillyTavern field and is not exported.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from engine.st_format import PresetNode

SYSTEM_PROMPT_SLOTS = ("main", "nsfw", "jailbreak", "enhanceDefinitions")
# SillyTavern's default order (100000) and its global one (100001, the one it uses and we read first).
ORDER_CHARACTERS = (100000, 100001)
PROMPT_SETTINGS = (
    "squash_system_messages",
    "personality_format",
    "scenario_format",
    "wi_format",
    "new_example_chat_prompt",
)


def st_prompt(node: PresetNode) -> dict[str, Any]:
    """One node as a SillyTavern prompt object."""
    prompt: dict[str, Any] = {
        "identifier": node.identifier,
        "name": node.name,
        "system_prompt": node.identifier in SYSTEM_PROMPT_SLOTS,
        "role": node.role,
        "content": node.content,
        "injection_position": node.injection_position,
        "injection_depth": node.injection_depth,
        "injection_order": node.injection_order,
        "injection_trigger": list(node.injection_trigger),
        "forbid_overrides": node.forbid_overrides,
    }
    if node.kind == "marker":
        prompt["marker"] = True
    return prompt


def export_preset(
    nodes: Sequence[PresetNode],
    *,
    settings: Mapping[str, Any],
    stored_text: str = "",
    shape: str = "prompt_manager",
) -> str:
    """The nodes (and prompt-shaping settings) as SillyTavern preset JSON text."""
    base: dict[str, Any] = {}
    if shape == "prompt_manager" and stored_text:
        loaded = json.loads(stored_text)
        if isinstance(loaded, dict):
            base = loaded
    base.pop("post_history", None)
    for section in ("sysprompt", "context"):
        if isinstance(base.get(section), dict):
            base[section].pop("post_history", None)
    for key in PROMPT_SETTINGS:
        if key in settings:
            base[key] = settings[key]
    order = [{"identifier": node.identifier, "enabled": node.enabled} for node in nodes]
    base["prompts"] = [st_prompt(node) for node in nodes]
    base["prompt_order"] = [
        {"character_id": character, "order": [dict(entry) for entry in order]}
        for character in ORDER_CHARACTERS
    ]
    return json.dumps(base, ensure_ascii=False, indent=4)
