"""Hand-made preset uploads the tests and benchmarks share (the generated big one is genpreset.py),
the preset that carries HTML and script for the XSS checks, and the shipped default sample document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DEFAULT_BUCKETS = Path(__file__).resolve().parents[1] / "assembly" / "default_buckets.json"


def make_preset(*contents: tuple[str, str, bool], markers: bool = True, **top: Any) -> bytes:
    """A Prompt Manager preset: `contents` are (identifier, text, enabled) content nodes after `main`,
    followed by the charDescription and chatHistory markers (when `markers`)."""
    prompts: list[dict[str, Any]] = [
        {"identifier": "main", "name": "Main Prompt", "role": "system", "content": "Be kind."}
    ]
    order = [{"identifier": "main", "enabled": True}]
    for identifier, text, enabled in contents:
        prompts.append(
            {"identifier": identifier, "name": identifier.title(), "role": "system", "content": text}
        )
        order.append({"identifier": identifier, "enabled": enabled})
    if markers:
        for identifier in ("charDescription", "chatHistory"):
            prompts.append({"identifier": identifier, "name": identifier, "marker": True})
            order.append({"identifier": identifier, "enabled": True})
    return json.dumps(
        {**top, "prompts": prompts, "prompt_order": [{"character_id": 100001, "order": order}]}
    ).encode()


XSS_PRESET = {
    "prompts": [
        {"identifier": "main", "name": "Main Prompt", "content": "Main says hi.", "role": "system"},
        {
            "identifier": "evil",
            "name": "Evil <b>node</b>",
            "content": "<script>alert('x')</script><img src=x onerror=\"alert('y')\">",
            "role": "system",
        },
        {"identifier": "chatHistory", "name": "Chat History", "marker": True},
    ],
    "prompt_order": [
        {
            "character_id": 100001,
            "order": [
                {"identifier": "main", "enabled": True},
                {"identifier": "evil", "enabled": True},
                {"identifier": "chatHistory", "enabled": True},
            ],
        }
    ],
}
