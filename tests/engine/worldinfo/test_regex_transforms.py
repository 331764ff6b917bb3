"""docs/regex.md#where-they-run: a World Info part a promptOnly World Info script changed names that script in
its `transforms` and keeps its text from before, like a history message."""

from __future__ import annotations

from typing import Any

import pytest

from engine import assemble, parse_buckets
from engine.regex import compile_script, parse_script
from engine.worldinfo import WorldInfoInput

from .conftest import book

HISTORY = [
    {"role": "user", "name": "Ann", "content": "hello there"},
    {"role": "assistant", "name": "Mira", "content": "hi Ann"},
    {"role": "user", "name": "Ann", "content": "tell me about the dragon"},
]


def script(name: str, find: str, replace: str, *, placement: list[int], script_id: str) -> Any:
    return compile_script(
        parse_script(
            {
                "id": script_id,
                "scriptName": name,
                "findRegex": find,
                "replaceString": replace,
                "placement": placement,
                "promptOnly": True,
            }
        )
    )


SHOUT = script("shout", "/dragon/g", "DRAGON", placement=[5], script_id="s-shout")
HUSH = script("hush", "/sleeps/g", "rests", placement=[5], script_id="s-hush")


def run(entries: list[dict[str, Any]], scripts, *, style: str | None = None, **changes: Any):
    data: dict[str, Any] = {"names": {"user": "Ann", "char": "Mira"}, "history": HISTORY, **changes}
    return assemble(
        parse_buckets(data),
        seed=7,
        style=style,
        world_info=WorldInfoInput(books=(book(*entries),)),
        regex_scripts=scripts,
        count_tokens=False,
    )


def holding(result, text: str):
    return next(m for m in result.messages if text in m.content)


def test_an_entry_changed_by_a_world_info_script_names_that_script_in_its_messages_transforms() -> None:
    result = run([{"key": ["dragon"], "content": "The dragon sleeps.", "position": 0}], (SHOUT,))
    message = holding(result, "The DRAGON sleeps.")
    assert message.to_dict()["transforms"] == [{"kind": "regex", "script": "shout", "id": "s-shout"}]
    assert message.originals == ("The dragon sleeps.",)


def test_every_script_that_changed_an_entry_is_named_in_running_order() -> None:
    result = run([{"key": ["dragon"], "content": "The dragon sleeps.", "position": 0}], (HUSH, SHOUT))
    message = holding(result, "The DRAGON rests.")
    assert [t.script for t in message.transforms] == ["hush", "shout"]


def test_an_entry_the_script_does_not_match_carries_none() -> None:
    result = run(
        [
            {"key": ["dragon"], "content": "The dragon sleeps.", "position": 0},
            {"key": ["dragon"], "content": "Mira keeps the library.", "position": 1},
        ],
        (SHOUT,),
    )
    untouched = holding(result, "Mira keeps the library.")
    assert "DRAGON" not in untouched.content
    assert untouched.transforms == () and untouched.originals == ()
    assert "transforms" not in untouched.to_dict()


def test_a_script_with_another_placement_does_not_touch_entries() -> None:
    user_input = script("user only", "/dragon/g", "WYRM", placement=[1], script_id="s-user")
    # keyed on a word the script leaves alone: World Info scans the rewritten history
    # (docs/assembly.md#what-sillytavern-118-corrected)
    result = run([{"key": ["about"], "content": "The dragon sleeps.", "position": 0}], (user_input,))
    lore = holding(result, "The dragon sleeps.")
    assert lore.transforms == ()
    history = holding(result, "tell me about the WYRM")  # the history message is its to change
    assert [t.script for t in history.transforms] == ["user only"]


@pytest.mark.parametrize("style", ["merge", "standalone"])
def test_an_injected_entry_changed_by_a_script_carries_it_in_both_styles(style: str) -> None:
    entries = [
        {"key": ["dragon"], "content": "The dragon sleeps.", "position": 4, "depth": 0},
        {"key": ["dragon"], "content": "Quiet here.", "position": 4, "depth": 0, "role": 1},
    ]
    result = run(entries, (SHOUT,), style=style)
    changed = holding(result, "The DRAGON sleeps.")
    assert [t.script for t in changed.transforms] == ["shout"]
    assert any("The dragon sleeps." in original for original in changed.originals)
    if style == "standalone":
        assert changed.originals == ("The dragon sleeps.",)
        assert holding(result, "Quiet here.").transforms == ()


def test_an_authors_note_entry_changed_by_a_script_carries_it() -> None:
    entries = [{"key": ["dragon"], "content": "The dragon sleeps.", "position": 2}]
    result = run(entries, (SHOUT,), style="standalone")
    note = holding(result, "The DRAGON sleeps.")
    assert note.role == "system" and [t.id for t in note.transforms] == ["s-shout"]


def test_only_the_example_pairs_a_script_changed_carry_it() -> None:
    content = "<START>\n{{user}}: any dragon?\n{{char}}: one.\n<START>\n{{user}}: books?\n{{char}}: many."
    result = run(
        [{"key": ["dragon"], "content": content, "position": 5}],
        (SHOUT,),
        sample_dialogues=[{"user": "server q", "char": "server a"}],
    )
    changed = holding(result, "any DRAGON?")
    assert [t.script for t in changed.transforms] == ["shout"]
    assert len(changed.originals) == 1 and "any dragon?" in changed.originals[0]
    assert holding(result, "books?").transforms == ()
