"""The preview's budget bar: where the tokens of each message go."""

from __future__ import annotations

from assembly.preview import budget_shares, preview_rows
from engine import assemble
from tests.engine.factories import build_preset, make_node, marker


def test_a_squashed_system_message_splits_its_tokens_between_server_prompts_and_preset_text(doc_with):
    preset = build_preset(
        [
            make_node("main", content="Stay in character as the innkeeper. " * 20),
            marker("charDescription"),
            marker("chatHistory"),
        ],
        settings={"squash_system_messages": True},
    )
    assembly = assemble(doc_with(), preset=preset, seed=1)
    rows = preview_rows(assembly)
    shares = {share.key: share.tokens for share in budget_shares(rows, assembly.tokens.total)}
    first = rows[0]
    assert first.message.role == "system" and len({s.kind for s in first.message.sources}) > 1
    assert shares["preset"] > 100  # the long main text is counted as preset text
    assert shares["system"] > 0
    assert sum(shares.values()) == sum(row.tokens for row in rows)
