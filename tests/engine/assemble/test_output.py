"""Provider shapes (docs/assembly.md#output-cli-api), token counts and the budget (docs/assembly.md#tokens),
and the bucket document's errors."""

from __future__ import annotations

import pytest

from engine import (
    CONVERSATION_START,
    BucketError,
    Message,
    assemble,
    count_text,
    native_source,
    parse_buckets,
    shape,
)
from tests.engine.factories import build_preset, depth, make_node, marker
from tests.present import present


def msg(role: str, content: str) -> Message:
    return Message(role=role, content=content, sources=(native_source("DIALOGUE_HISTORY"),))


def test_openai_gets_the_messages_as_they_are():
    assert shape("openai", [msg("system", "S"), msg("user", "U")]) == {
        "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    }


def test_anthropic_lifts_leading_system_items_and_turns_later_ones_into_user_text():
    body = shape(
        "anthropic",
        [
            msg("system", "S1"),
            msg("system", "S2"),
            msg("user", "U"),
            msg("system", "LATE"),
            msg("assistant", "A"),
        ],
    )
    assert body["system"] == "S1\n\nS2"
    assert body["messages"] == [
        {"role": "user", "content": "U\n\n[System: LATE]"},
        {"role": "assistant", "content": "A"},
    ]


def test_anthropic_starts_with_a_user_turn_when_the_first_turn_is_the_assistants():
    body = shape("anthropic", [msg("system", "S"), msg("assistant", "A"), msg("assistant", "B")])
    assert body["messages"] == [
        {"role": "user", "content": CONVERSATION_START},
        {"role": "assistant", "content": "A\n\nB"},
    ]


def test_gemini_uses_model_for_the_assistant_and_a_system_instruction():
    body = shape(
        "gemini", [msg("system", "S"), msg("user", "U"), msg("assistant", "A"), msg("system", "LATE")]
    )
    assert body["system_instruction"] == {"parts": [{"text": "S"}]}
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "U"}]},
        {"role": "model", "parts": [{"text": "A"}]},
        {"role": "user", "parts": [{"text": "[System: LATE]"}]},
    ]


def test_token_counts_are_exact_for_openai_encodings_offline():
    # Reference counts from OpenAI's published tokenizers.
    assert count_text("hello world", "o200k_base") == 2
    assert count_text("hello world", "cl100k_base") == 2
    assert count_text("", "o200k_base") == 0


def test_each_message_costs_its_tokens_plus_three_and_the_reply_priming_three_more(sample_doc):
    result = assemble(sample_doc)
    for message, tokens in zip(result.messages, result.tokens.per_message, strict=True):
        assert tokens == count_text(message.content) + 3
    assert result.tokens.total == sum(result.tokens.per_message) + 3
    assert result.tokens.exact


def test_cl100k_can_be_chosen(sample_doc):
    assert assemble(sample_doc, encoding="cl100k_base").tokens.encoding == "cl100k_base"


def test_other_providers_are_counted_as_an_estimate_on_their_shape(sample_doc):
    result = assemble(sample_doc, provider="anthropic")
    assert not result.tokens.exact
    assert present(result.provider_payload)["system"].startswith(sample_doc.system_prompt)


def test_sample_dialogues_get_what_the_trimmed_history_leaves_whole_and_in_order(doc_with):
    # SillyTavern 1.18 (openai.js, populateChatHistory then populateDialogueExamples): the newest
    # messages that fit first, then each example block while the whole block fits in what is left
    short = [{"user": "Map?", "char": "A favour."}, {"user": "Riddle?", "char": "Keys, no locks."}] * 2
    full = assemble(doc_with(sample_dialogues=short))
    everything = [m.content for m in full.messages if m.tag == "DIALOGUE_SAMPLE"]
    history_count = len(doc_with().history)
    kept_with_cut_history = 0
    for context in range(full.tokens.total - 150, full.tokens.total, 3):
        trimmed = assemble(doc_with(sample_dialogues=short, budget={"context": context + 100, "reply": 100}))
        samples = [m.content for m in trimmed.messages if m.tag == "DIALOGUE_SAMPLE"]
        assert samples == everything[: len(samples)]
        assert trimmed.tokens.total <= context
        if samples and sum(1 for m in trimmed.messages if m.history) < history_count:
            kept_with_cut_history += 1
    assert kept_with_cut_history


def test_a_budget_the_whole_history_fits_keeps_the_first_sample_pairs(doc_with):
    full = assemble(doc_with())
    budget = full.tokens.total - 10
    trimmed = assemble(doc_with(budget={"context": budget + 100, "reply": 100}))
    samples = [m for m in trimmed.messages if m.tag == "DIALOGUE_SAMPLE"]
    assert len(samples) == 1
    assert sum(1 for m in trimmed.messages if m.history) == len(doc_with().history)
    assert any("Sample dialogue 2" in o.what for o in trimmed.omitted)


def test_the_budget_then_trims_the_oldest_history_messages(doc_with):
    doc = doc_with(sample_dialogues=[])
    full = assemble(doc)
    trimmed = assemble(doc_with(sample_dialogues=[], budget={"context": full.tokens.total - 30}))
    history = [m.content for m in trimmed.messages if m.history]
    assert 0 < len(history) < len(doc.history)
    assert history[-1] == "Mira: Is it... a secret?"
    assert any("oldest history" in o.what for o in trimmed.omitted)


def test_an_injection_older_than_the_messages_kept_is_trimmed_with_them_as_sillytavern_does(doc_with):
    # SillyTavern 1.18 keeps the newest messages that fit, injected ones included (own-budget-trim-depth)
    doc = doc_with(sample_dialogues=[])
    count = len(doc.history)
    preset = build_preset(
        [
            depth("deep", "A very old note.", count - 1),
            depth("near", "A recent note.", 1),
            marker("chatHistory"),
        ]
    )
    full = assemble(doc, preset=preset, style="standalone")
    assert {"A very old note.", "A recent note."} <= {m.content for m in full.messages}
    trimmed = assemble(
        doc_with(sample_dialogues=[], budget={"context": full.tokens.total - 30}),
        preset=preset,
        style="standalone",
    )
    contents = [m.content for m in trimmed.messages]
    assert "A very old note." not in contents
    assert "A recent note." in contents
    assert any(o.what == f"An in-chat system message at depth {count - 1}." for o in trimmed.omitted)


def test_the_chat_is_filled_newest_first_and_stops_at_the_first_message_that_does_not_fit(doc_with):
    # SillyTavern 1.18 (openai.js, populateChatHistory) walks the chat newest first, in-chat messages
    # included, and stops at the first that does not fit: a long note at depth 0 that does not fit
    # leaves the whole chat out, though older short messages would have fitted
    doc = doc_with(sample_dialogues=[])
    preset = build_preset(
        [make_node("main", content="Main."), depth("long", "long " * 120, 0), marker("chatHistory")]
    )
    full = assemble(doc, preset=preset, style="standalone")
    costs = full.tokens.per_message
    note = next(i for i, m in enumerate(full.messages) if m.content.startswith("long long"))
    chat = sum(cost for cost, m in zip(costs, full.messages, strict=True) if m.history) + costs[note]

    def with_room(room: int):
        context = full.tokens.total - chat + room
        return assemble(
            doc_with(sample_dialogues=[], budget={"context": context}), preset=preset, style="standalone"
        )

    trimmed = with_room(costs[note] - 1)
    assert not any(m.history or m.content.startswith("long long") for m in trimmed.messages)
    assert "Main." in [m.content for m in trimmed.messages]
    assert any("latest history message" in w for w in trimmed.warnings)
    roomy = with_room(costs[note] + 30)
    assert any(m.content.startswith("long long") for m in roomy.messages)
    assert 0 < sum(1 for m in roomy.messages if m.history) < len(doc.history)


def test_system_and_preset_items_are_never_trimmed_and_an_impossible_budget_says_so(doc_with):
    preset = build_preset([make_node("big", content="word " * 400), marker("chatHistory")])
    result = assemble(doc_with(budget={"context": 100}), preset=preset)
    assert any(m.content.startswith("word word") for m in result.messages)
    assert any("never trimmed" in w for w in result.warnings)


def test_a_missing_seed_is_drawn_and_returned_and_a_given_seed_repeats_the_output(doc_with):
    doc = doc_with(seed=None)
    preset = build_preset(
        [make_node("r", content="{{random::a::b::c::d::e::f::g::h}}"), marker("chatHistory")]
    )
    first = assemble(doc, preset=preset)
    again = assemble(doc, preset=preset, seed=first.seed)
    assert [m.content for m in first.messages] == [m.content for m in again.messages]


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ([], "must be a JSON object"),
        ({"version": 2}, "version"),
        ({"history": [{"role": "system", "content": "x"}]}, "history[0].role"),
        ({"history": "nope"}, "`history` must be a list"),
        ({"personality": ["ok", 3]}, "personality[1]"),
        ({"timezone": "Mars/Olympus"}, "timezone"),
        ({"now": "yesterday"}, "`now`"),
        ({"budget": {"context": 10, "reply": 20}}, "budget"),
        ({"items": [{"tag": "NOPE", "role": "system", "text": "x"}]}, "items[0].tag"),
        ({"seed": -1}, "seed"),
    ],
)
def test_a_bad_bucket_document_is_refused_with_one_sentence_naming_the_field(data, needle):
    with pytest.raises(BucketError) as caught:
        parse_buckets(data)
    assert needle in caught.value.message
    assert caught.value.message.endswith(".") and "\n" not in caught.value.message


def test_pre_built_tagged_items_feed_the_content_macros():
    doc = parse_buckets(
        {
            "items": [
                {"tag": "DIALOGUE_HISTORY", "role": "user", "text": "hello"},
                {"tag": "SYSTEM_PERSONA_PROMPT", "role": "system", "text": "PERSONA"},
                {"tag": "SYSTEM_HUMANIZER_RULES", "role": "system", "text": "FALLBACK", "fallback": True},
            ]
        }
    )
    preset = build_preset(
        [make_node("d", content="About: {{description}}"), marker("charDescription"), marker("chatHistory")]
    )
    result = assemble(doc, preset=preset)
    assert [m.content for m in result.messages] == ["About: PERSONA", "PERSONA", "hello"]
    native = assemble(doc)
    assert [m.content for m in native.messages] == ["FALLBACK", "PERSONA", "hello"]


def test_the_budget_counts_messages_as_they_are_sent_names_in_place_of_the_macros(doc_with):
    # SillyTavern counts the message it sends: "{{char}}" written 300 times is 300 short names, and
    # a budget that fits them keeps the whole history (each message's role counts too)
    preset = build_preset([make_node("who", content="{{char}} " * 300), marker("chatHistory")])
    doc = doc_with(sample_dialogues=[], names={"user": "Mira", "char": "Jo"})
    full = assemble(doc, preset=preset, encoding="cl100k_base")
    roles = len(full.messages)  # one token each
    fitting = doc_with(
        sample_dialogues=[],
        names={"user": "Mira", "char": "Jo"},
        budget={"context": full.tokens.total + roles + 1},
    )
    kept = assemble(fitting, preset=preset, encoding="cl100k_base")
    assert sum(1 for m in kept.messages if m.history) == len(doc.history)
    tight = doc_with(
        sample_dialogues=[], names={"user": "Mira", "char": "Jo"}, budget={"context": full.tokens.total}
    )
    trimmed = assemble(tight, preset=preset, encoding="cl100k_base")
    assert sum(1 for m in trimmed.messages if m.history) < len(doc.history)
