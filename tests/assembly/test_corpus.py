"""Every corpus preset assembles the default sample: no error, the system prompt exactly once, the
history present, and after it only what the preset itself places after chatHistory."""

from __future__ import annotations

from pathlib import Path

import pytest

from assembly.engine import assemble
from presets.compiled import compile_preset
from presets.st_format import ImportRefused, parse_preset

CORPUS = Path("/work/shared/corpus")
FILES = sorted([*CORPUS.glob("pm/*.json"), *CORPUS.glob("legacy/*.json")])


def _preset(path: Path):
    try:
        parsed = parse_preset(path.read_bytes(), filename=path.name)
    except ImportRefused:
        pytest.skip(f"{path.name} is refused by the importer")
    return compile_preset(
        preset_id=1, name=parsed.name, injection_style="merge", settings=parsed.settings, nodes=parsed.nodes
    )


def _after_history_expected(preset) -> bool:
    """True when some enabled node after chatHistory (or a depth injection) may produce messages."""
    ids = [cn.node.identifier for cn in preset.nodes]
    at = ids.index("chatHistory") if "chatHistory" in ids else len(ids)
    return any(cn.node.enabled and cn.node.kind != "comment" for cn in preset.nodes[at + 1 :])


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_corpus_preset_assembles_the_default_sample(path, sample_doc):
    preset = _preset(path)
    result = assemble(sample_doc, preset=preset)
    contents = [m.content for m in result.messages]
    system_prompt = sample_doc.system_prompt
    assert sum(c.count(system_prompt) for c in contents) == 1
    history_at = [i for i, m in enumerate(result.messages) if m.history]
    assert len(history_at) == len(sample_doc.history)
    assert history_at == list(range(history_at[0], history_at[0] + len(history_at)))
    after = result.messages[history_at[-1] + 1 :]
    if after and not _after_history_expected(preset):
        assert all(m.sources[0].kind == "assembler" for m in after)
    for message in after:
        assert message.sources[0].kind in ("node", "assembler") or message.sources[0].tag in (
            "DIALOGUE_SAMPLE",
            "SYSTEM_HUMANIZER_RULES",
            "SYSTEM_CHANNEL_PROMPT",
            "SYSTEM_PERSONA_PROMPT",
            "SYSTEM_PERSONALITY",
            "KNOWLEDGE_SERVER_DOCUMENTS",
        )
        assert message.sources[0].tag != "DIALOGUE_HISTORY"
