"""Hostile input, fuzzed: the importer, the macro engine and the bucket parser fail only with their own
clear errors. A few hundred examples each here; `bench/fuzz.py` runs 10,000+ per target."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from devtools.fuzz.strategies import (
    assembly_inputs,
    bucket_documents,
    json_values,
    macro_text,
    preset_uploads,
)
from devtools.fuzz.targets import assembly_target, bucket_target, import_target, macro_target
from tests.engine.fuzzing import examples

CI = settings(
    max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)
# the strategies must reach input the parsers accept: a fixed search, stopped at its first find (not shrunk)
REACH = settings(max_examples=2000, database=None, derandomize=True, phases=[Phase.generate])


@CI
@given(preset_uploads)
def test_any_upload_either_imports_or_is_refused_with_one_sentence(raw):
    import_target(raw)


@CI
@given(st.binary(max_size=2000))
def test_random_bytes_are_refused_with_one_sentence_never_a_crash(raw):
    import_target(raw)


@CI
@given(macro_text, st.dictionaries(st.text(max_size=6), json_values, max_size=4), st.integers(0, 2**63))
def test_any_macro_text_renders_without_raising(text, variables, seed):
    macro_target(text, variables, seed)


@CI
@given(bucket_documents)
def test_any_bucket_document_parses_or_gets_a_bucket_error(document):
    bucket_target(document)


@settings(
    max_examples=examples(100), deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)
@given(assembly_inputs)
def test_any_accepted_preset_with_any_accepted_document_assembles(inputs):
    assembly_target(*inputs)


def test_the_upload_strategy_reaches_presets_the_importer_accepts():
    """Were every generated upload refused, a target that swallowed all errors would pass unseen."""
    accepted = find(preset_uploads, import_target, settings=REACH)
    assert import_target(accepted)


def test_the_bucket_strategy_reaches_documents_the_parser_accepts():
    accepted = find(bucket_documents, bucket_target, settings=REACH)
    assert bucket_target(accepted)


def test_a_foreign_exception_inside_a_target_surfaces():
    def broken(*args, **kwargs):
        raise KeyError("prompts")

    with pytest.raises(KeyError):
        import_target(b"{}", parse=broken)
    with pytest.raises(KeyError):
        bucket_target({}, parse=broken)


def test_the_targets_accept_refusals_in_one_sentence():
    assert import_target(b"not json") is False
    assert import_target(b'{"spec": "chara_card_v2", "data": {"first_mes": "hi"}}') is False
    assert bucket_target([1, 2, 3]) is False
    macro_target("{{roll:999999d999999}}{{each::[1,2]}}{{loop_value}}{{/each}}")
