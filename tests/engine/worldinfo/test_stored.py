"""A lorebook is compiled once per stored version: the bytes every process loads give back the book
compiled from the file, and bytes of another engine layout are refused (compiled again instead)."""

from __future__ import annotations

import pytest

from engine.worldinfo import book_from_bytes, book_to_bytes, compile_book, parse_lorebook
from tests.corpus import CORPUS

from .conftest import book, history, run, uids

WORLD_INFO_FILES = sorted((CORPUS / "worldinfo").glob("*.json"))


@pytest.mark.skipif(not WORLD_INFO_FILES, reason="the shared corpus is not on this machine")
@pytest.mark.parametrize("path", WORLD_INFO_FILES, ids=lambda p: p.name)
def test_every_corpus_lorebook_loads_back_as_the_book_compiled_from_its_file(path):
    parsed = parse_lorebook(path.read_bytes(), filename=path.name)
    compiled = compile_book(parsed.name, parsed.entries)
    loaded = book_from_bytes(book_to_bytes(compiled))
    assert loaded == compiled
    assert [ce.entry.extra for ce in loaded.entries] == [ce.entry.extra for ce in compiled.entries]


def test_a_loaded_book_activates_the_same_entries_with_its_regex_and_phrase_keys():
    compiled = book(
        {"key": ["/dra(g|k)on/i"], "content": "Dragons hoard gold."},
        {"key": ["old harbor"], "content": "The harbor is old."},
        {"key": ["lantern"], "content": "A lantern.", "sticky": 2},
    )
    loaded = book_from_bytes(book_to_bytes(compiled))
    texts = history("A DRAKON flew over the old harbor", "no lantern here")
    assert uids(run(loaded, texts)) == uids(run(compiled, texts)) == [0, 1, 2]


def test_bytes_of_another_layout_or_damaged_bytes_load_as_nothing():
    blob = book_to_bytes(book({"key": ["lantern"], "content": "A lantern."}))
    assert book_from_bytes(blob.replace(b"tk-wi:", b"tk-wi:0", 1)) is None
    assert book_from_bytes(blob[: len(blob) // 2]) is None
    assert book_from_bytes(b"") is None


class _Planted:
    """What someone who could write the stored bytes would plant: unpickling it calls `record`."""

    def __reduce__(self):
        return (_record, ("planted code ran",))


_RAN: list[str] = []


def _record(text: str) -> None:
    _RAN.append(text)


def test_planted_bytes_with_a_valid_header_load_as_nothing_and_run_nothing():
    import pickle
    import zlib

    header = book_to_bytes(book({"key": ["lantern"], "content": "A lantern."})).split(b":", 2)
    planted = b":".join(header[:2]) + b":" + zlib.compress(pickle.dumps(_Planted()))
    assert book_from_bytes(planted) is None
    assert _RAN == []


def test_switching_entries_gives_the_book_compiled_from_the_switched_entries():
    from dataclasses import replace

    from engine.worldinfo import switch_entries

    compiled = book(
        {"key": ["lantern"], "content": "A lantern."},
        {"key": ["harbor"], "content": "A harbor.", "disable": True},
        {"key": ["/tower/i"], "content": "A tower."},
    )
    switched = switch_entries(compiled, {0: False, 1: True, 2: True})
    expected = compile_book(
        "Lore",
        [
            replace(compiled.entries[0].entry, disable=True),
            replace(compiled.entries[1].entry, disable=False),
            compiled.entries[2].entry,
        ],
    )
    assert switched == expected
    assert switched.entries[2] is compiled.entries[2]  # unchanged entries are kept as they are
    texts = history("the lantern, the harbor and the TOWER")
    assert uids(run(switched, texts)) == [1, 2]
    assert switch_entries(compiled, {0: True, 1: False}) is compiled
