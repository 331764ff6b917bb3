"""Every real community file through the import service: stored whole, or refused in one sentence
with nothing written."""

from __future__ import annotations

import json

import pytest

from engine.st_format import ImportRefused
from presets import services
from presets.models import Preset, PresetNode
from tests.corpus import CORPUS, needs_corpus

pytestmark = [needs_corpus, pytest.mark.django_db]

FILES = sorted(p for p in CORPUS.glob("*/*") if p.is_file() and p.suffix.lower() == ".json")


def test_the_corpus_is_there():
    assert {p.parent.name for p in FILES} >= {"pm", "legacy", "worldinfo", "cards"}


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_a_corpus_file_is_stored_whole_or_refused_in_one_sentence(path, lantern, alice):
    try:
        result = services.preset_import(server=lantern, raw=path.read_bytes(), filename=path.name, by=alice)
    except ImportRefused as exc:
        assert path.parent.name != "pm" or "corrupt" in path.name, (
            f"a Prompt Manager preset was refused: {exc.message}"
        )
        assert "\n" not in exc.message and exc.message.strip()[-1] in ".!?", exc.message
        assert exc.status in (400, 413)
        assert not Preset.objects.exists() and not PresetNode.objects.exists()
        return
    assert path.parent.name not in ("worldinfo", "cards"), "a non-preset file was stored"
    preset = Preset.objects.get(pk=result.preset.pk)
    stored_nodes = list(preset.nodes.order_by("position").values_list("identifier", flat=True))
    assert len(stored_nodes) == preset.node_count == result.summary.nodes > 0
    assert preset.is_active and len(set(stored_nodes)) == len(stored_nodes)
    assert isinstance(json.loads(preset.stored_text), dict)
