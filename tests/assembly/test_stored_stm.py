"""A document naming a channel and user uses the server's stored short-term memory
(docs/assembly.md#the-bucket-document)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from assembly.selectors import assemble_for_server
from engine import parse_buckets
from tests.engine.factories import build_preset, make_node, marker


def store(lantern):
    from memory.services import stm_put_entry

    recent = timezone.now() - timedelta(hours=1)
    stm_put_entry(
        server_id=lantern.pk,
        channel_id=501,
        user_id=9,
        messages=[],
        summary="They planned the heist.",
        updated_at=recent,
    )
    stm_put_entry(
        server_id=lantern.pk,
        channel_id=502,
        user_id=9,
        messages=[],
        summary="We are at the vault door.",
        updated_at=recent,
    )


def doc(sample_document, **context):
    return parse_buckets(
        {
            **sample_document,
            "short_term_memory": [{"role": "user", "text": "INLINE MEMORY"}],
            "stm_context": {"channel": 502, "user": 9, "has_tools": True, **context},
        }
    )


def test_stored_memory_replaces_the_inline_items(lantern, sample_document):
    store(lantern)
    result = assemble_for_server(server_id=lantern.pk, doc=doc(sample_document), native=True)
    stm = [m.content for m in result.messages if m.tag == "KNOWLEDGE_SHORT_TERM_MEMORY"]
    assert not any("INLINE MEMORY" in text for text in stm)
    assert any("They planned the heist." in text for text in stm)
    assert any("We are at the vault door." in text for text in stm)


def test_a_node_expanding_summary_drops_the_stored_same_channel_summary(lantern, sample_document):
    store(lantern)
    preset = build_preset([make_node("s", content="Recap: {{summary}}"), marker("chatHistory")])
    from assembly.selectors import stored_stm
    from engine.assemble import assemble

    document = doc(sample_document)
    result = assemble(document, preset=preset, stm=stored_stm(lantern.pk, document))
    contents = [m.content for m in result.messages]
    assert any(c.startswith("Recap: ") and "We are at the vault door." in c for c in contents)
    stm = [m.content for m in result.messages if m.tag == "KNOWLEDGE_SHORT_TERM_MEMORY"]
    assert not any("We are at the vault door." in text for text in stm)
    assert any("They planned the heist." in text for text in stm)
    assert any("summary" in o.what for o in result.omitted)


def test_another_channels_memory_shows_its_stored_conversation_not_the_turns_copy(lantern, sample_document):
    from conversations.channels.services import message_delete, message_post
    from memory.services import stm_put_entry

    stm_put_entry(
        server_id=lantern.pk,
        channel_id=501,
        user_id=9,
        messages=[{"role": "user", "name": "Ann", "content": "COPY FROM STM TURNS"}],
        summary="",
        updated_at=timezone.now() - timedelta(hours=1),
    )
    message_post(
        server_id=lantern.pk,
        channel_id=501,
        message_id=10,
        role="user",
        content="Where is the map?",
        author_id=9,
        author_name="Ann",
    )
    message_post(
        server_id=lantern.pk, channel_id=501, message_id=11, role="user", content="DELETED LINE", author_id=9
    )
    message_delete(server_id=lantern.pk, channel_id=501, message_id=11)
    result = assemble_for_server(server_id=lantern.pk, doc=doc(sample_document), native=True)
    stm = " ".join(m.content for m in result.messages if m.tag == "KNOWLEDGE_SHORT_TERM_MEMORY")
    assert "Where is the map?" in stm
    assert "COPY FROM STM TURNS" not in stm and "DELETED LINE" not in stm
