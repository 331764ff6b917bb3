"""Small hand-made presets for the importer tests: build a dict, get the parsed result."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from engine.st_format import ImportRefused, ParsedPreset, parse_preset

ONE_SENTENCE = re.compile(r"[^\n]+[.]")


def is_one_sentence(message: str) -> bool:
    """True for a single line ending in a full stop, with no second sentence starting inside it."""
    return bool(ONE_SENTENCE.fullmatch(message)) and not re.search(r"[.!?]\s+[A-Z]", message)


def prompt(identifier: str, content: str = "", **fields: Any) -> dict[str, Any]:
    """One Prompt Manager prompt as SillyTavern writes it."""
    return {
        "identifier": identifier,
        "name": fields.pop("name", identifier),
        "system_prompt": fields.pop("system_prompt", False),  # SillyTavern writes it on every prompt
        "content": content,
        **fields,
    }


def pm_preset(
    prompts: list[Any], order: list[Any] | None = None, character_id: Any = 100001, **top: Any
) -> dict:
    """A Prompt Manager preset; `order` defaults to every prompt enabled, under `character_id`."""
    if order is None:
        order = [{"identifier": p["identifier"], "enabled": True} for p in prompts if isinstance(p, dict)]
    return {"prompts": prompts, "prompt_order": [{"character_id": character_id, "order": order}], **top}


def to_bytes(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


@pytest.fixture
def parse():
    """parse(dict_or_bytes, filename=...) -> ParsedPreset."""

    def _parse(data: Any, filename: str = "preset.json", **kwargs: Any) -> ParsedPreset:
        raw = data if isinstance(data, bytes) else to_bytes(data)
        return parse_preset(raw, filename=filename, **kwargs)

    return _parse


@pytest.fixture
def refusal(parse):
    """refusal(dict_or_bytes) -> the ImportRefused the import raises (fails the test if it imports)."""

    def _refusal(data: Any, **kwargs: Any) -> ImportRefused:
        with pytest.raises(ImportRefused) as caught:
            parse(data, **kwargs)
        return caught.value

    return _refusal


def node(parsed: ParsedPreset, identifier: str):
    """The parsed node with `identifier`."""
    matches = [n for n in parsed.nodes if n.identifier == identifier]
    assert len(matches) == 1, f"{identifier}: {len(matches)} nodes"
    return matches[0]


def warned(parsed: ParsedPreset, fragment: str) -> list[str]:
    """The summary warnings containing `fragment`."""
    return [w for w in parsed.summary.warnings if fragment in w]
