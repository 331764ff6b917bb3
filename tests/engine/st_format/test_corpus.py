"""Every real file in the corpus is imported, or refused with one sentence that says what it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.st_format import ImportRefused, ParsedPreset, parse_preset
from tests.corpus import CORPUS, needs_corpus

from .conftest import is_one_sentence

CORPUS = CORPUS
PRESET_FILES = sorted((CORPUS / "pm").glob("*.json")) + sorted((CORPUS / "legacy").glob("*.json"))
WORLD_INFO_FILES = sorted((CORPUS / "worldinfo").glob("*.json"))
CARD_FILES = sorted((CORPUS / "cards").glob("*.json"))

pytestmark = needs_corpus


def _ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" for p in paths]


def _outcome(path: Path) -> ParsedPreset | ImportRefused:
    try:
        return parse_preset(path.read_bytes(), filename=path.name)
    except ImportRefused as refused:
        return refused


@pytest.mark.parametrize("path", PRESET_FILES, ids=_ids(PRESET_FILES))
def test_a_corpus_preset_is_imported_or_refused_with_one_sentence(path: Path) -> None:
    outcome = _outcome(path)
    if isinstance(outcome, ImportRefused):
        assert is_one_sentence(outcome.message), outcome.message
        assert outcome.status == 400
        return
    assert outcome.nodes, "an imported preset has nodes"
    identifiers = [n.identifier for n in outcome.nodes]
    assert len(identifiers) == len(set(identifiers)), "node identifiers are unique"
    assert all(is_one_sentence(w) for w in outcome.summary.warnings), outcome.summary.warnings
    assert outcome.summary.nodes == len(outcome.nodes)


@pytest.mark.parametrize("path", PRESET_FILES, ids=_ids(PRESET_FILES))
def test_a_corpus_presets_stored_text_is_json_without_secrets(path: Path) -> None:
    outcome = _outcome(path)
    if isinstance(outcome, ImportRefused):
        pytest.skip("refused files are not stored")
    stored = json.loads(outcome.stored_text, strict=False)
    original = json.loads(path.read_bytes().decode("utf-8-sig"), strict=False)
    assert list(stored) == list(original), "top-level key order is preserved"
    for key in outcome.summary.secrets_blanked:
        assert stored[key] in ("", [], {})


@pytest.mark.parametrize("path", WORLD_INFO_FILES, ids=_ids(WORLD_INFO_FILES))
def test_a_world_info_file_is_refused_as_a_lorebook(path: Path) -> None:
    outcome = _outcome(path)
    assert isinstance(outcome, ImportRefused)
    assert outcome.message == (
        "This is a SillyTavern World Info (lorebook) file, not a preset: import it on the Lorebooks page instead."
    )


@pytest.mark.parametrize("path", CARD_FILES, ids=_ids(CARD_FILES))
def test_a_character_card_is_refused_as_a_card(path: Path) -> None:
    outcome = _outcome(path)
    assert isinstance(outcome, ImportRefused)
    assert (
        outcome.message
        == "This is a SillyTavern character card, not a preset: import it on the Characters page."
    )


def test_the_corrupt_nemoengine_source_is_refused_with_its_line_and_column() -> None:
    outcome = _outcome(CORPUS / "pm" / "nemoengine-6.0-corrupt-source.json")
    assert isinstance(outcome, ImportRefused)
    assert "line 1182, column 30" in outcome.message


def test_an_instruct_template_without_a_system_prompt_is_refused_as_one() -> None:
    outcome = _outcome(CORPUS / "legacy" / "st-instruct-ChatML.json")
    assert isinstance(outcome, ImportRefused)
    assert "instruct template without a system prompt" in outcome.message


def test_sampler_settings_alone_are_refused_as_sampler_settings() -> None:
    outcome = _outcome(CORPUS / "legacy" / "marinara-MadLad.json")
    assert isinstance(outcome, ImportRefused)
    assert "sampler settings" in outcome.message


def test_every_prompt_manager_file_in_the_corpus_imports() -> None:
    refused = [
        p.name for p in sorted((CORPUS / "pm").glob("*.json")) if isinstance(_outcome(p), ImportRefused)
    ]
    assert refused == ["nemoengine-6.0-corrupt-source.json"]


def test_the_old_default_settings_export_converts_from_the_pre_prompt_manager_format() -> None:
    outcome = _outcome(CORPUS / "pm" / "st-openai-Default-settings-2023-07.json")
    assert isinstance(outcome, ParsedPreset)
    assert outcome.shape == "pre_prompt_manager"
