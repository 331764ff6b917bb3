"""The harness's folds (docs/fidelity.md#the-deliberate-differences) and its first-difference report."""

from __future__ import annotations

from engine import SAMPLE_NOTE
from fidelity.compare import digest, first_difference, fold_ours, fold_sillytavern


def test_the_speakers_name_is_folded_out_of_our_user_messages_only():
    ours = [
        {"role": "user", "content": "Ann: hello"},
        {"role": "assistant", "content": "Ann: a reply quoting her"},
        {"role": "user", "content": "Bob: not a speaker of this chat"},
    ]
    folded = fold_ours(ours, speakers=["Ann"])
    assert [m["content"] for m in folded.messages] == [
        "hello",
        "Ann: a reply quoting her",
        "Bob: not a speaker of this chat",
    ]
    assert folded.folds == ["§11.1 item 1: the speaker's name in our user messages is left out"]


def test_a_named_user_message_keeps_its_text():
    folded = fold_ours([{"role": "user", "content": "Ann: hi", "name": "Ann"}], speakers=["Ann"])
    assert folded.messages[0]["content"] == "Ann: hi" and folded.folds == []


def test_our_sample_note_and_their_whitespace_only_messages_are_left_out():
    assert fold_ours([{"role": "user", "content": SAMPLE_NOTE}], speakers=[]).messages == []
    theirs = fold_sillytavern([{"role": "system", "content": "  \n"}, {"role": "user", "content": "x"}])
    assert theirs.messages == [{"role": "user", "content": "x"}] and len(theirs.folds) == 1


def test_the_first_difference_names_the_message_and_the_character():
    said = first_difference(
        [{"role": "system", "content": "same"}, {"role": "user", "content": "abcdef"}],
        [{"role": "system", "content": "same"}, {"role": "user", "content": "abcXef"}],
        digests=False,
    )
    assert said is not None and said.startswith("message 1: SillyTavern sent user, we sent user")
    assert "first differing character 3" in said


def test_digests_compare_role_name_length_and_text():
    theirs = [digest({"role": "system", "content": "text", "name": "example_user"})]
    assert (
        first_difference(
            theirs, [{"role": "system", "content": "text", "name": "example_user"}], digests=True
        )
        is None
    )
    said = first_difference(
        theirs, [{"role": "system", "content": "texts", "name": "example_user"}], digests=True
    )
    assert said is not None and "lengths 4 / 5" in said


def test_a_missing_message_is_reported():
    said = first_difference([{"role": "user", "content": "x"}], [], digests=False)
    assert said is not None and "we sent nothing" in said


def test_what_a_draw_changes_between_seeds_is_masked_and_the_rest_still_compared():
    from fidelity.compare import DRAW, apply_masks, draw_masks

    runs = [
        [{"role": "system", "content": "Roll: 4 of 20. Keep going."}],
        [{"role": "system", "content": "Roll: 17 of 20. Keep going."}],
        [{"role": "system", "content": "Roll: 9 of 20. Keep going."}],
    ]
    masks = draw_masks(runs)
    theirs, count = apply_masks([{"role": "system", "content": "Roll: 12 of 20. Keep going."}], masks)
    assert theirs[0]["content"] == f"Roll: {DRAW} of 20. Keep going." and count == 1
    # SillyTavern's text around the draw must still match: here it does not, so nothing is masked
    other, count = apply_masks([{"role": "system", "content": "Roll: 12 of 6. Keep going."}], masks)
    assert other[0]["content"] == "Roll: 12 of 6. Keep going." and count == 0


def test_messages_every_seed_agrees_on_get_no_mask():
    from fidelity.compare import draw_masks

    same = [{"role": "user", "content": "hello"}]
    assert draw_masks([same, same]) == [None]


def test_a_macro_with_a_pipe_is_made_inert_on_our_side_as_sillytavern_sends_it_as_written():
    from fidelity.ours import CLOSE, OPEN, as_written_pipes

    data = {"prompts": [{"identifier": "a", "content": "x {{setvar::k::a|b}} {{getvar::k}} {{// a|b }}"}]}
    changed, count = as_written_pipes(data)
    assert count == 1
    assert (
        changed["prompts"][0]["content"] == f"x {OPEN}setvar::k::a|b{CLOSE} {{{{getvar::k}}}} {{{{// a|b }}}}"
    )


def test_history_our_names_crowded_out_is_folded_only_when_the_names_cost_as_much():
    from fidelity.compare import fold_trimmed

    theirs = [
        {"role": "system", "content": "main"},
        {"role": "user", "content": "old one"},
        {"role": "user", "content": "kept"},
    ]
    ours = [{"role": "system", "content": "main"}, {"role": "user", "content": "kept"}]
    folded = fold_trimmed(theirs, ours, name_tokens=10, cost=lambda m: 8)
    assert folded is not None and folded[0] == ours and "1 fewer" in folded[1]
    assert fold_trimmed(theirs, ours, name_tokens=5, cost=lambda m: 8) is None  # names do not explain it
    other = [{"role": "system", "content": "main"}, {"role": "user", "content": "changed"}]
    assert fold_trimmed(theirs, other, name_tokens=99, cost=lambda m: 8) is None
