from tests.corpus import CORPUS, needs_corpus


@needs_corpus
def test_the_shared_corpus_of_real_presets_is_there_to_test_against():
    assert len(list((CORPUS / "pm").glob("*.json"))) >= 10, f"no corpus at {CORPUS} (set TAVERNKEEP_CORPUS)"
