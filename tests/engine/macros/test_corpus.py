"""Every node of every real community preset renders; unsupported names are documented."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from engine.macros import MacroEnv, Segment, compile_text, render_segments
from tests.corpus import CORPUS, needs_corpus

DOCS = Path(__file__).resolve().parents[3] / "docs" / "macros.md"
PRESETS = sorted((CORPUS / "pm").glob("*.json"))


def prompt_texts(path: Path) -> list[tuple[str, str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return []
    prompts = data.get("prompts") if isinstance(data, dict) else None
    if not isinstance(prompts, list):
        return []
    return [
        (str(prompt.get("identifier") or index), prompt["content"])
        for index, prompt in enumerate(prompts)
        if isinstance(prompt, dict) and isinstance(prompt.get("content"), str)
    ]


@cache
def render_preset(path: Path):
    segments = [Segment(key, compile_text(text)) for key, text in prompt_texts(path)]
    return segments, render_segments(segments, env=MacroEnv(description="d", personality="p"), seed=11)


pytestmark = needs_corpus


@pytest.mark.parametrize("path", PRESETS, ids=lambda path: path.name)
def test_every_node_of_a_corpus_preset_renders(path: Path) -> None:
    segments, output = render_preset(path)
    assert len(output.segments) == len(segments)
    for segment, rendered in zip(segments, output.segments, strict=True):
        assert isinstance(rendered.text, str)
        assert "\x00" not in rendered.text or "\x00" in segment.template.source


@pytest.mark.parametrize("path", PRESETS, ids=lambda path: path.name)
def test_no_corpus_preset_trips_a_limit(path: Path) -> None:
    _, output = render_preset(path)
    assert not [warning for warning in output.warnings if "limit" in warning or "nested deeper" in warning]


def test_every_unsupported_macro_name_in_the_corpus_is_listed_in_the_docs() -> None:
    names: set[str] = set()
    for path in PRESETS:
        for _, text in prompt_texts(path):
            names |= compile_text(text).unknown_names
    documented = DOCS.read_text(encoding="utf-8")
    missing = sorted(name for name in names if f"`{name}`" not in documented)
    assert not missing, f"add these to docs/macros.md: {missing}"
