"""Every corpus preset assembles the default sample: no error, the system prompt exactly once, the
history present, and after it only what the preset itself places after chatHistory."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import assemble, compile_preset
from engine.st_format import ImportRefused, parse_preset
from tests.corpus import CORPUS, needs_corpus

pytestmark = needs_corpus

FILES = sorted([*CORPUS.glob("pm/*.json"), *CORPUS.glob("legacy/*.json")])


def _preset(path: Path):
    try:
        parsed = parse_preset(path.read_bytes(), filename=path.name)
    except ImportRefused:
        pytest.skip(f"{path.name} is refused by the importer")
    return compile_preset(
        preset_id=1, name=parsed.name, injection_style="merge", settings=parsed.settings, nodes=parsed.nodes
    )


def _placed_after_history(preset) -> tuple[set[str], set[str]]:
    """(node identifiers, native tags) an enabled node positioned after chatHistory may emit."""
    from engine.assemble.rearrange import MARKER_TAG

    ids = [cn.node.identifier for cn in preset.nodes]
    if "chatHistory" not in ids:
        return set(), set()
    nodes: set[str] = set()
    tags: set[str] = set()
    for cn in preset.nodes[ids.index("chatHistory") + 1 :]:
        node = cn.node
        if not node.enabled:
            continue
        nodes.add(node.identifier)
        if node.identifier == "main":
            tags.update(("SYSTEM_HUMANIZER_RULES", "SYSTEM_CHANNEL_PROMPT"))
        elif node.kind == "marker" and node.identifier in MARKER_TAG:
            tags.add(MARKER_TAG[node.identifier])
            if node.identifier in ("worldInfoBefore", "worldInfoAfter"):
                tags.add("KNOWLEDGE_SERVER_DOCUMENTS")  # the first World Info marker takes the documents
    return nodes, tags


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_corpus_preset_assembles_the_default_sample(path, sample_doc):
    preset = _preset(path)
    result = assemble(sample_doc, preset=preset)
    contents = [m.content for m in result.messages]
    assert sum(c.count(sample_doc.system_prompt) for c in contents) == 1
    history_at = [i for i, m in enumerate(result.messages) if m.history]
    if not any(cn.node.identifier == "chatHistory" and cn.node.enabled for cn in preset.nodes):
        # chatHistory switched off (vcrp-engine, virgo-summarizer-plus): SillyTavern 1.18 sends no chat
        assert history_at == []
        assert any("Chat History node" in w for w in result.warnings)
        return
    assert len(history_at) == len(sample_doc.history)
    assert history_at == list(range(history_at[0], history_at[0] + len(history_at)))
    allowed_nodes, allowed_tags = _placed_after_history(preset)
    for message in result.messages[history_at[-1] + 1 :]:
        for source in message.sources:
            assert (
                source.kind == "assembler"
                or (source.kind == "node" and source.identifier in allowed_nodes)
                or (source.kind == "native" and source.tag in allowed_tags)
                # each sample dialogue opens with the preset's separator
                # (docs/assembly.md#what-sillytavern-118-corrected)
                or (source.name == "new_example_chat_prompt" and "DIALOGUE_SAMPLE" in allowed_tags)
            ), f"{source} follows the history but the preset does not place it there"
