"""The assembled output of every shared corpus preset is exactly what it was when the hashes were
recorded (both toggle variants, both injection styles, three seeds): a speed-up changes nothing."""

from __future__ import annotations

import json
import os

import pytest

from tests.corpus import CORPUS
from tests.engine.assemble.corpus_hashes import HASHES, corpus_files, hashes_for, long_document

RECORDED: dict[str, dict[str, str]] = json.loads(HASHES.read_text(encoding="utf-8"))

if not (CORPUS / "pm").is_dir() and not os.environ.get("CI"):
    pytest.skip(f"no shared corpus at {CORPUS} (set TAVERNKEEP_CORPUS)", allow_module_level=True)


@pytest.fixture(scope="module")
def conversation():
    return long_document()


def test_every_recorded_preset_is_still_in_the_corpus():
    present = {path.relative_to(CORPUS).as_posix() for path in corpus_files()}
    assert present == set(RECORDED)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_the_preset_assembles_exactly_as_recorded(name, conversation):
    assert hashes_for(CORPUS / name, conversation) == RECORDED[name]
