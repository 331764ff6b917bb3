"""One node as an admin edited it, normalised exactly as an import would
(docs/import.md#prompt-manager-presets): the edited fields are written as a one-prompt SillyTavern preset and
read back by the importer, so an edit can never store what an upload could not, and its warnings are the
importer's own sentences."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.st_format import ImportRefused, PresetNode, node_warnings, parse_preset

from ..errors import EngineError

# The generation types SillyTavern offers for a prompt's trigger
# (docs/assembly.md#generation-types-and-prefill).
EDITABLE_FIELDS = (
    "name",
    "content",
    "role",
    "injection_position",
    "injection_depth",
    "injection_order",
    "injection_trigger",
    "forbid_overrides",
)


class EditRefused(EngineError):
    """An edit that cannot be made as asked; `message` is one sentence for the admin."""


@dataclass(frozen=True, slots=True)
class NormalisedNode:
    """The node to store and what the importer had to say about it."""

    node: PresetNode
    warnings: tuple[str, ...]


def normalise_node(
    values: Mapping[str, Any], *, identifier: str, marker: bool, enabled: bool, max_bytes: int
) -> NormalisedNode:
    """The node an edit produces from `values` (fields of EDITABLE_FIELDS, as a form or JSON gives
    them). Raises EditRefused when the text is too large to import."""
    prompt: dict[str, Any] = {"identifier": identifier}
    for name in EDITABLE_FIELDS:
        if name in values:
            prompt[name] = values[name]
    if marker:
        prompt["marker"] = True
    document = {
        "prompts": [prompt],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": identifier, "enabled": enabled}]}],
    }
    raw = json.dumps(document, ensure_ascii=False).encode()
    try:
        parsed = parse_preset(raw, filename="edit.json", max_bytes=max_bytes)
    except ImportRefused as exc:
        raise EditRefused(exc.message) from None
    # What the file itself caused (a character removed on decoding…), then what the node says; not the
    # sentences about the preset as a whole, which a one-node document would always trigger.
    node = parsed.nodes[0]
    return NormalisedNode(node=node, warnings=(*parsed.summary.import_warnings, *node_warnings([node])))
