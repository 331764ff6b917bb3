"""A generated Prompt Manager preset of a chosen size and node count, for the import benchmarks
and the tests of big presets.

`make_big_preset()` is deterministic: the same arguments always give the same bytes.
"""

from __future__ import annotations

import json
import random
from typing import Any

MARKERS = (
    "worldInfoBefore",
    "personaDescription",
    "charDescription",
    "charPersonality",
    "scenario",
    "worldInfoAfter",
    "dialogueExamples",
    "chatHistory",
)
# Text shaped like real presets: macros, comments, variables, HTML status bars, CJK prose.
SNIPPETS = (
    "Write {{char}}'s next reply in this never-ending roleplay with {{user}}. ",
    "{{// author's note: keep this section short }}",
    "{{setvar::mood::calm}}{{getvar::mood}} ",
    "{{random::rain::sun::snow}} weather today. ",
    '<div class="status">HP {{getvar::hp}}</div> ',
    "<rules>Stay in character; never speak for {{user}}.</rules>\n",
    "保持角色设定，描写细腻，避免重复。 ",
    "{{description}} ",
    "Time: {{time}}, {{weekday}}. ",
    "{{roll:2d6}} ",
)


# Macros the engine does not know (as in real presets, on a few nodes): the import summary lists them.
UNKNOWN_SNIPPET = "{{#if persona}}{{persona}}{{/if}} {{status_bar}} "


def _content(rng: random.Random, length: int, unknown: bool = False) -> str:
    parts: list[str] = [UNKNOWN_SNIPPET] if unknown else []
    total = 0
    while total < length:
        piece = rng.choice(SNIPPETS)
        parts.append(piece)
        total += len(piece.encode("utf-8"))
    return "".join(parts)


def _preset(nodes: int, content_bytes: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    content_nodes = max(0, nodes - len(MARKERS) - 1)
    per_node = content_bytes // max(1, content_nodes + 1)
    prompts: list[dict[str, Any]] = [
        {"identifier": "main", "name": "Main Prompt", "role": "system", "content": _content(rng, per_node)}
    ]
    prompts += [{"identifier": m, "name": m, "marker": True, "system_prompt": True} for m in MARKERS]
    for i in range(content_nodes):
        depth = i % 7 == 0
        prompts.append(
            {
                "identifier": f"node-{i:04d}",
                "name": f"🧩 Section {i}",
                "role": rng.choice(("system", "system", "user", "assistant")),
                "content": _content(rng, per_node, unknown=i % 10 == 0),
                "system_prompt": False,
                "marker": False,
                "injection_position": 1 if depth else 0,
                "injection_depth": rng.randint(0, 6) if depth else 4,
                "injection_order": rng.choice((100, 90, "100", " 50 ")),
                "injection_trigger": [],
                "forbid_overrides": False,
            }
        )
    order = [{"identifier": p["identifier"], "enabled": rng.random() < 0.6} for p in prompts]
    return {
        "temperature": 1,
        "openai_model": "gpt-4o",
        "squash_system_messages": True,
        "prompts": prompts,
        "prompt_order": [{"character_id": 100001, "order": order}],
    }


def make_big_preset(nodes: int = 500, size: int = 2_000_000, seed: int = 1) -> bytes:
    """UTF-8 JSON of a Prompt Manager preset with `nodes` nodes and close to (never over) `size` bytes."""
    skeleton = len(json.dumps(_preset(nodes, 0, seed), ensure_ascii=False, indent=4).encode("utf-8"))
    budget = max(0, size - skeleton)
    # JSON escaping and the snippets' overshoot make the first guess a little large: shrink until it fits.
    while True:
        raw = json.dumps(_preset(nodes, budget, seed), ensure_ascii=False, indent=4).encode("utf-8")
        if len(raw) <= size or budget == 0:
            return raw
        budget = max(0, budget - (len(raw) - size) - nodes * 64)


if __name__ == "__main__":
    data = make_big_preset()
    print(f"{len(data)} bytes, {len(json.loads(data)['prompts'])} prompts")
