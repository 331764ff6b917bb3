"""Every script of every corpus preset compiles or is reported inactive with its reason, runs on
sample texts as docs/regex.md#scripts-and-their-engine says, and NemoEngine v10's own scripts keep
`<thinking>` out of Discord."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from engine.regex import (
    CompiledScript,
    RegexRequest,
    RegexTimeout,
    clean_reply,
    compile_replacement,
    compile_scripts,
    scripts_of_preset,
)
from tests.corpus import CORPUS, needs_corpus

PRESETS = sorted((CORPUS / "pm").glob("*.json"))
NEMO = CORPUS / "pm" / "nemoengine-v10.json"
pytestmark = needs_corpus

SAMPLES = [
    "",
    "Plain words, nothing else.",
    "<think>\nI should greet them.\n</think>\nHello there!",
    "<thinking>Plan the scene.</thinking>\n\nShe nods.",
    "Leaked </thinking> tag mid-reply.",
    '<st-tracker type="status" title="Status" icon="❤" accent="#c33">\n<st-row k="HP" v="10"/>\n</st-tracker>',
    '<details><summary>Tracker</summary>HP: 10 / Mood: calm</details>\n"Fine," he said.',
    "Without thinking, she ran. His voice was barely above a whisper.",
    "A 🔥 fire, a ✨ spark, ❤️ and 💀 — emoji everywhere 😭.",
    "中文回复：她笑了笑。<状态栏>心情：好</状态栏>",
    "**Bold** and *italic* and `code`\n\n---\n\n> quote",
    "Line one\nLine two\r\nLine three\n\n\n\nAfter blank lines.",
    "{{user}} says hi to {{char}} $1 $& $<x> ok",
]


def _data(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, UnicodeDecodeError):
        return None  # files the preset importer refuses have no scripts to run


@cache
def compiled_of(path: Path) -> tuple[CompiledScript, ...]:
    return compile_scripts(scripts_of_preset(_data(path)).scripts)


def _all_scripts() -> list[tuple[str, CompiledScript]]:
    return [(path.stem, c) for path in PRESETS for c in compiled_of(path)]


def test_the_corpus_ships_scripts_to_test():
    assert len(_all_scripts()) >= 200


@pytest.mark.parametrize("path", PRESETS, ids=[p.stem for p in PRESETS])
def test_every_script_compiles_or_is_inactive_with_a_one_sentence_reason(path):
    for compiled in compiled_of(path):
        if compiled.active:
            assert compiled.regex is not None or compiled.script.substitute_regex
        else:
            assert compiled.inactive and compiled.inactive.endswith(".")


def _literal(compiled: CompiledScript) -> bool:
    template = compiled.script.replace_string
    return (
        "$" not in template and "{" not in template and "<USER>" not in template and "<BOT>" not in template
    )


def test_each_script_on_each_sample_replaces_exactly_what_it_matches():
    """docs/regex.md#scripts-and-their-engine: `g` replaces every match, no `g` the first only; a literal
    replacement goes in as
    written; a text the pattern does not match comes back unchanged."""
    checked = 0
    for _, compiled in _all_scripts():
        if not compiled.active or compiled.regex is None:
            continue
        regex = compiled.regex
        replacement = compile_replacement(compiled.script.replace_string, compiled.script.trim_strings)
        for text in SAMPLES:
            try:
                spans = regex.spans(text)
                result = regex.replace(text, replacement)
            except RegexTimeout:
                continue  # reported, text kept: covered by the rule tests
            if not spans:
                assert result == text
                continue
            assert regex.may_match(text), f"{compiled.script.label}: a matching text was judged unmatchable"
            if _literal(compiled):
                expected, last = [], 0
                for start, end in spans:
                    expected += [text[last:start], compiled.script.replace_string]
                    last = end
                assert result == "".join(expected) + text[last:], compiled.script.label
            checked += 1
    assert checked > 50


def test_nemoengine_v10_ships_118_scripts_and_all_compile():
    scripts = compiled_of(NEMO)
    assert len(scripts) == 118
    assert all(c.active for c in scripts)


def test_nemoengine_v10_keeps_the_thinking_block_out_of_the_display_and_renders_trackers():
    reply = (
        "<thinking>\nShe is wary; keep it short.\n</thinking>\n"
        '"Fine," she said.\n'
        '<st-tracker type="status" title="Status" icon="❤" accent="#c33">\n<st-row k="HP" v="10"/>\n</st-tracker>'
    )
    cleaned = clean_reply(compiled_of(NEMO), reply, RegexRequest(seed=1, user="Ann", char="Nemo"))
    assert "thinking" not in cleaned.display and "She is wary" not in cleaned.display
    assert '"Fine," she said.' in cleaned.display
    assert "<details" in cleaned.display and "HP" in cleaned.display  # the tracker, as the preset's HTML
    assert "<st-tracker" in cleaned.stored  # display-only scripts never touch what the bot keeps
    assert cleaned.errors == ()
