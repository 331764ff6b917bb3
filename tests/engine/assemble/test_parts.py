"""Items are rebuilt with other parts (wrapping, squashing, injections) without losing anything else."""

from __future__ import annotations

from dataclasses import fields

from engine import Item, Part, native_source


def test_an_item_given_other_parts_keeps_every_other_field():
    source = native_source("KNOWLEDGE_SHORT_TERM_MEMORY")
    item = Item(
        "KNOWLEDGE_SHORT_TERM_MEMORY",
        "assistant",
        (Part("old", (source,), False),),
        fallback=True,
        group=3,
        history=True,
        same_channel=True,
    )
    parts = (Part("new", (source,), True),)
    copy = item.with_parts(parts)
    assert copy.parts == parts
    assert item.text == "old"
    for field in fields(Item):
        if field.name != "parts":
            assert getattr(copy, field.name) == getattr(item, field.name), field.name
