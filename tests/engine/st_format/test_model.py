"""The dataclasses other parts store and cache: JSON and pickle round trips, and the compiled preset."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

from engine import compile_preset
from engine.macros import compile_text
from engine.st_format import PresetNode, PromptSettings
from engine.st_format.kinds import is_comment_only
from tests.corpus import CORPUS, needs_corpus

from .conftest import pm_preset, prompt

CORPUS_PM = CORPUS / "pm"


def test_a_node_round_trips_through_json(parse) -> None:
    n = parse(pm_preset([prompt("a", "A", role="user", injection_trigger=["normal"])])).nodes[0]
    assert PresetNode.from_dict(json.loads(json.dumps(n.to_dict()))) == n


def test_settings_round_trip_and_ignore_unknown_keys() -> None:
    s = PromptSettings(squash_system_messages=True, wi_format="[{0}]")
    assert PromptSettings.from_dict({**s.to_dict(), "future_key": 1}) == s
    assert PromptSettings.from_dict(None) == PromptSettings()


def test_compiling_keeps_the_order_and_compiles_content_and_comment_nodes_but_no_marker(parse) -> None:
    prompts = [prompt("main", "Hi {{char}}", role="system"), prompt("chatHistory", marker=True)]
    prompts.append(prompt("c", "{{// note }}", role="system"))
    parsed = parse(pm_preset(prompts))
    compiled = compile_preset(
        preset_id=7, name=parsed.name, injection_style="merge", settings=parsed.settings, nodes=parsed.nodes
    )
    assert [c.node.identifier for c in compiled.nodes] == ["main", "chatHistory", "c"]
    assert compiled.nodes[0].template == compile_text("Hi {{char}}")
    # a comment-only node is rendered as SillyTavern renders it (what is left may join a squash)
    assert compiled.nodes[1].template is None and compiled.nodes[2].template == compile_text("{{// note }}")
    assert pickle.loads(pickle.dumps(compiled)) == compiled


@needs_corpus
def test_comment_detection_agrees_with_the_macro_engine_on_every_corpus_prompt() -> None:
    disagreements = []
    for path in sorted(CORPUS_PM.glob("*.json")):
        try:
            data = json.loads(path.read_bytes().decode("utf-8-sig"), strict=False)
        except ValueError:
            continue
        for p in data.get("prompts") or []:
            text = p.get("content") if isinstance(p, dict) else None
            if isinstance(text, str) and is_comment_only(text) != compile_text(text).is_comment_only:
                disagreements.append((path.name, text[:80]))
    assert disagreements == []


def test_the_importer_and_compiled_preset_import_no_django() -> None:
    code = (
        "import sys, engine.st_format, engine.compiled; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'assembly', 'memory')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[3], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
