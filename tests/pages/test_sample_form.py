"""The sample as a form: named fields laid over the JSON document and back, row buttons, and the
preview page reading either view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.http import QueryDict
from django.urls import reverse

from assembly.sample_form import (
    SAMPLE_FIELDS,
    apply_row_op,
    document_from_form,
    form_from_document,
)
from engine.buckets import BucketError, parse_buckets
from tests.present import present

DEFAULT = json.loads((Path(__file__).resolve().parents[2] / "assembly" / "default_buckets.json").read_text())


def _posted(document: dict) -> QueryDict:
    """What the browser sends for the form showing `document` (every field, as the template names it)."""
    data = QueryDict(mutable=True)
    for section in form_from_document(document):
        for shown in section.fields:
            if shown.field.kind == "rows":
                data[f"{shown.name}-rows"] = str(len(shown.rows))
                for row in shown.rows:
                    for _, name, value in row:
                        data[name] = value
            elif shown.field.kind == "blocks":
                data.setlist(shown.name, list(shown.items))
            else:
                data[shown.name] = shown.value
    return data


def test_the_form_of_the_default_sample_gives_the_same_document_back():
    assert document_from_form(_posted(DEFAULT), DEFAULT) == DEFAULT


def test_the_form_alone_rebuilds_every_field_it_shows():
    rebuilt = document_from_form(_posted(DEFAULT), None)
    shown = {field.path.split(".")[0] for field in SAMPLE_FIELDS}
    assert {key: rebuilt[key] for key in shown if key in rebuilt} == {
        key: DEFAULT[key] for key in shown if key in DEFAULT
    }


def test_changing_a_history_line_changes_only_that_line():
    data = _posted(DEFAULT)
    last = len(DEFAULT["history"]) - 1
    data[f"b-history-{last}-content"] = "Is it the moon?\r\nOr its shadow?"
    document = document_from_form(data, DEFAULT)
    assert document["history"][-1]["content"] == "Is it the moon?\nOr its shadow?"
    assert document["history"][:-1] == DEFAULT["history"][:-1]
    assert parse_buckets(document).history[-1].content == "Is it the moon?\nOr its shadow?"


def test_keys_the_form_does_not_show_survive_a_form_change():
    document = document_from_form(_posted(DEFAULT), DEFAULT)
    for key in ("now", "timezone", "seed", "short_term_memory", "impersonation"):
        assert document[key] == DEFAULT[key]


def test_a_blank_channel_prompt_removes_it_and_a_blank_budget_context_removes_the_budget():
    document = {**DEFAULT, "budget": {"context": 8000, "reply": 500}}
    data = _posted(document)
    data["b-channel_prompt.text"] = "  "
    data["b-budget.context"] = ""
    rebuilt = document_from_form(data, document)
    assert "channel_prompt" not in rebuilt and "budget" not in rebuilt
    assert parse_buckets(rebuilt).channel_prompt is None


def test_a_number_that_is_not_a_number_is_left_for_the_schema_to_name():
    data = _posted(DEFAULT)
    data["b-budget.context"] = "lots"
    with pytest.raises(BucketError, match=r"`budget\.context` must be a whole number"):
        parse_buckets(document_from_form(data, DEFAULT))


def test_personality_is_one_trait_per_line_and_empty_memory_boxes_are_dropped():
    data = _posted(DEFAULT)
    data["b-personality"] = "brave\n\n  kind  \n"
    data.setlist("b-server_memories", ["first", "", "second\nline"])
    document = document_from_form(data, DEFAULT)
    assert document["personality"] == ["brave", "kind"]
    assert document["server_memories"] == ["first", "second\nline"]


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        ("history:up:1", ["b", "a", "c"]),
        ("history:down:1", ["a", "c", "b"]),
        ("history:remove:0", ["b", "c"]),
        ("history:up:0", ["a", "b", "c"]),
        ("history:remove:9", ["a", "b", "c"]),
        ("nonsense", ["a", "b", "c"]),
    ],
)
def test_row_buttons_move_and_remove_history_lines(op, expected):
    document = {"history": [{"role": "user", "name": n, "content": n} for n in "abc"]}
    assert [row["name"] for row in apply_row_op(document, op)["history"]] == expected


def test_a_new_history_line_answers_the_last_user_line():
    document = apply_row_op({"history": [{"role": "user", "name": "Mira", "content": "hi"}]}, "history:add")
    assert document["history"][-1] == {"role": "assistant", "content": ""}
    assert parse_buckets(document).history[-1].role == "assistant"


@pytest.fixture
def preview_url(lantern):
    return reverse("assembly:preview-render", args=[lantern.id])


@pytest.mark.django_db
def test_carols_form_post_without_javascript_renders_the_changed_line(client, carol, preview_url):
    client.force_login(carol)
    data = _posted(DEFAULT)
    data["b-history-6-content"] = "Is it a candle?"
    data["document"] = json.dumps(DEFAULT)
    response = client.post(preview_url, data)
    html = response.content.decode()
    assert response.status_code == 200
    assert "Mira: Is it a candle?" in html
    assert "Is it a candle?" in response.context["document_text"]


@pytest.mark.django_db
def test_an_add_line_button_without_javascript_shows_one_more_row(client, carol, preview_url):
    client.force_login(carol)
    data = _posted(DEFAULT)
    data["document"] = json.dumps(DEFAULT)
    data["op"] = "history:add"
    response = client.post(preview_url, data)
    history = next(f for s in response.context["sections"] for f in s.fields if f.field.path == "history")
    assert len(history.rows) == len(DEFAULT["history"]) + 1


@pytest.mark.django_db
def test_under_htmx_a_form_change_swaps_the_json_and_a_json_change_swaps_the_fields(
    client, carol, preview_url
):
    client.force_login(carol)
    data = _posted(DEFAULT)
    data["document"] = json.dumps(DEFAULT)
    html = client.post(preview_url, data, headers={"HX-Request": "true"}).content.decode()
    assert 'id="document"' in html and 'id="sample-fields"' not in html
    data["source"] = "json"
    html = client.post(preview_url, data, headers={"HX-Request": "true"}).content.decode()
    assert 'id="sample-fields"' in html and 'id="document"' not in html


@pytest.mark.django_db
def test_carol_saves_the_sample_from_the_form(client, carol, lantern):
    from assembly.selectors import sample_bucket_named

    client.force_login(carol)
    data = _posted(DEFAULT)
    data["b-names.char"] = "Biscuit"
    data["document"] = json.dumps(DEFAULT)
    data["name"] = "Cat night"
    response = client.post(reverse("assembly:sample-save", args=[lantern.id]), data)
    assert response.status_code == 302
    assert present(sample_bucket_named(lantern.id, "Cat night")).document["names"]["char"] == "Biscuit"


def test_a_generation_type_chosen_in_the_form_reaches_the_document_and_blank_leaves_it_unset():
    data = _posted(DEFAULT)
    data["b-generation_type"] = "quiet"
    data["b-quiet_prompt"] = "Summarise the scene in one line."
    document = document_from_form(data, DEFAULT)
    parsed = parse_buckets(document)
    assert (parsed.generation_type, parsed.quiet_prompt) == ("quiet", "Summarise the scene in one line.")
    data["b-generation_type"] = ""
    assert "generation_type" not in document_from_form(data, document)


def test_the_world_info_fields_from_the_form_reach_the_document():
    data = _posted(DEFAULT)
    data["b-scenario"] = "A storm rolls over the harbour."
    data["b-chat_length"] = "42"
    data["b-world_info_state"] = '{"sticky": {}}'
    parsed = parse_buckets(document_from_form(data, DEFAULT))
    assert (parsed.scenario, parsed.chat_length) == ("A storm rolls over the harbour.", 42)
    assert parsed.world_info_state == {"sticky": {}}


def test_the_authors_note_and_the_users_persona_round_trip_through_the_form():
    document = {
        **DEFAULT,
        "user_persona": "Ann mends nets.",
        "authors_note": {
            "text": "Be brief.",
            "position": "after_main",
            "depth": 2,
            "role": "user",
            "interval": 3,
        },
    }
    rebuilt = document_from_form(_posted(document), None)
    assert rebuilt["authors_note"] == document["authors_note"]
    assert rebuilt["user_persona"] == "Ann mends nets."
    assert parse_buckets(rebuilt).authors_note.position == "after_main"


def test_a_blank_authors_note_leaves_the_whole_note_out():
    posted = _posted({**DEFAULT, "authors_note": {"text": "x", "depth": 2}})
    posted["b-authors_note.text"] = ""
    assert "authors_note" not in document_from_form(posted, None)
