"""docs/worldinfo.md#placement: where activated entries land, in native assembly and inside a preset, with
their sources."""

from __future__ import annotations

from typing import Any

import pytest

from engine import assemble, parse_buckets
from engine.worldinfo import WorldInfoInput, WorldInfoSettings
from tests.engine.factories import build_preset, make_node, marker

from .conftest import book

HISTORY = [
    {"role": "user", "name": "Ann", "content": "hello there"},
    {"role": "assistant", "name": "Mira", "content": "hi Ann"},
    {"role": "user", "name": "Ann", "content": "tell me about the dragon"},
]


def doc(**changes: Any):
    data: dict[str, Any] = {
        "names": {"user": "Ann", "char": "Mira"},
        "system_prompt": "You are Mira.",
        "persona_prompt": "Mira is a librarian.",
        "personality": ["curious"],
        "history": HISTORY,
    }
    data.update(changes)
    return parse_buckets(data)


def run(entries: list[dict[str, Any]], *, preset=None, style=None, settings=None, **changes: Any):
    world_info = WorldInfoInput(books=(book(*entries),), settings=WorldInfoSettings(**(settings or {})))
    return assemble(
        doc(**changes), preset=preset, style=style, seed=7, world_info=world_info, count_tokens=False
    )


def wi_parts(result) -> list[tuple[int, str, list[int]]]:
    """(message index, role, the world_info sources' uids) for every message holding World Info."""
    out = []
    for index, message in enumerate(result.messages):
        uids = [s.uid for s in message.sources if s.kind == "world_info"]
        if uids:
            out.append((index, message.role, uids))
    return out


def test_native_before_char_entries_follow_the_channel_prompt_and_precede_the_persona() -> None:
    result = run([{"key": ["dragon"], "content": "Dragons hoard books.", "position": 0}])
    texts = [m.content for m in result.messages]
    lore = next(i for i, t in enumerate(texts) if "Dragons hoard books." in t)
    persona = next(i for i, t in enumerate(texts) if "Mira is a librarian." in t)
    assert lore < persona
    source = next(s for s in result.messages[lore].sources if s.kind == "world_info")
    assert source.to_dict() == {"kind": "world_info", "book": "Lore", "uid": 0, "comment": ""}


def test_native_after_char_entries_follow_the_personality() -> None:
    result = run([{"key": ["dragon"], "content": "After the character.", "position": 1}])
    texts = [m.content for m in result.messages]
    assert texts.index(next(t for t in texts if "After the character." in t)) > texts.index(
        next(t for t in texts if "curious" in t)
    )


def test_entries_of_one_position_go_by_order_ascending_joined_by_newlines() -> None:
    result = run(
        [
            {"key": ["dragon"], "content": "Second.", "order": 50},
            {"key": ["dragon"], "content": "First.", "order": 10},
        ]
    )
    assert any("First.\nSecond." in m.content for m in result.messages)


def test_the_world_info_markers_take_the_texts_inside_a_preset_wrapped_by_wi_format() -> None:
    preset = build_preset(
        [
            marker("main"),
            marker("worldInfoBefore"),
            make_node("middle", content="MIDDLE"),
            marker("worldInfoAfter"),
            marker("chatHistory"),
        ],
        settings={"wi_format": "[Lore: {0}]"},
    )
    result = run(
        [
            {"key": ["dragon"], "content": "Before text.", "position": 0},
            {"key": ["dragon"], "content": "After text.", "position": 1},
        ],
        preset=preset,
    )
    joined = "\n".join(m.content for m in result.messages)
    assert joined.index("[Lore: Before text.]") < joined.index("MIDDLE") < joined.index("[Lore: After text.]")


def test_a_preset_without_world_info_markers_sends_the_text_after_every_node_as_sillytavern_does() -> None:
    # SillyTavern 1.18 appends worldInfoBefore/After after the last prompt of an order lacking them
    # (docs/assembly.md#what-sillytavern-118-corrected)
    preset = build_preset([marker("main"), marker("chatHistory"), make_node("post", content="POST")])
    result = run([{"key": ["dragon"], "content": "Leftover lore.", "position": 0}], preset=preset)
    texts = [m.content for m in result.messages]
    lore = next(i for i, text in enumerate(texts) if "Leftover lore." in text)
    assert lore > texts.index("POST") > max(i for i, m in enumerate(result.messages) if m.history)


def test_a_disabled_world_info_marker_omits_its_text_and_says_so() -> None:
    preset = build_preset([marker("main"), marker("worldInfoBefore", enabled=False), marker("chatHistory")])
    result = run([{"key": ["dragon"], "content": "Hidden lore.", "position": 0}], preset=preset)
    assert not any("Hidden lore." in m.content for m in result.messages)
    assert any("worldInfoBefore disabled" in o.reason for o in result.omitted)


@pytest.mark.parametrize("style", ["merge", "standalone"])
def test_at_depth_entries_are_injected_by_role_in_both_styles(style: str) -> None:
    result = run(
        [
            {"key": ["dragon"], "content": "As user.", "position": 4, "depth": 0, "role": 1},
            {"key": ["dragon"], "content": "As system.", "position": 4, "depth": 0, "role": 0},
        ],
        style=style,
    )
    last = result.messages[-1]
    if style == "merge":
        # merged into the latest history message as one [System: …] batch; the role is ignored
        assert "tell me about the dragon" in last.content and "[System: " in last.content
        assert "As user." in last.content and "As system." in last.content
    else:
        # one message per role after the last message, system nearest the end
        assert [m.role for m in result.messages[-2:]] == ["user", "system"]
        assert result.messages[-2].content == "As user." and last.content == "As system."


def test_standalone_depth_counts_history_messages_after_the_injection() -> None:
    result = run([{"key": ["dragon"], "content": "Deep.", "position": 4, "depth": 2}], style="standalone")
    index = next(i for i, m in enumerate(result.messages) if m.content == "Deep.")
    assert sum(1 for m in result.messages[index + 1 :] if m.history) == 2


def test_authors_note_positions_become_one_system_injection_at_depth_4_top_before_bottom() -> None:
    history = [{"role": "user", "name": "Ann", "content": f"message {i} dragon"} for i in range(6)]
    result = run(
        [
            {"key": ["dragon"], "content": "Bottom note.", "position": 3},
            {"key": ["dragon"], "content": "Top note.", "position": 2},
        ],
        style="standalone",
        history=history,
    )
    index = next(i for i, m in enumerate(result.messages) if "Top note." in m.content)
    message = result.messages[index]
    # SillyTavern 1.18 puts the (empty) note between them: a blank line
    # (docs/assembly.md#what-sillytavern-118-corrected)
    assert message.role == "system" and message.content == "Top note.\n\nBottom note."
    assert sum(1 for m in result.messages[index + 1 :] if m.history) == 4


def test_example_message_entries_frame_the_servers_sample_dialogues() -> None:
    result = run(
        [
            {"key": ["dragon"], "content": "<START>\n{{user}}: top q\n{{char}}: top a", "position": 5},
            {"key": ["dragon"], "content": "<START>\n{{user}}: bottom q\n{{char}}: bottom a", "position": 6},
        ],
        sample_dialogues=[{"user": "server q", "char": "server a"}],
    )
    joined = "\n".join(m.content for m in result.messages)
    assert joined.index("top q") < joined.index("server q") < joined.index("bottom q")
    assert "Ann: top q" in joined and "Mira: top a" in joined


def test_outlet_entries_appear_only_where_the_preset_reads_them() -> None:
    preset = build_preset(
        [marker("main"), make_node("side", content="<side>{{outlet::notes}}</side>"), marker("chatHistory")]
    )
    result = run(
        [
            {"key": ["dragon"], "content": "Low.", "position": 7, "outletName": "notes", "order": 1},
            {"key": ["dragon"], "content": "High.", "position": 7, "outletName": "notes", "order": 9},
            {"key": ["dragon"], "content": "Nobody reads me.", "position": 7, "outletName": "elsewhere"},
        ],
        preset=preset,
    )
    joined = "\n".join(m.content for m in result.messages)
    assert "<side>High.\nLow.</side>" in joined
    assert "Nobody reads me." not in joined
    assert any("elsewhere" in w for w in result.warnings)


def test_entry_macros_render_before_the_preset_so_its_variable_writes_come_first() -> None:
    preset = build_preset(
        [marker("main"), make_node("mood", content="Mood: {{getvar::mood}}"), marker("chatHistory")]
    )
    result = run(
        [{"key": ["dragon"], "content": "{{setvar::mood::wary}}Dragons near {{user}}."}], preset=preset
    )
    joined = "\n".join(m.content for m in result.messages)
    assert "Mood: wary" in joined and "Dragons near Ann." in joined
    assert result.variables["mood"] == "wary"


def test_the_output_explains_what_activated_and_why() -> None:
    result = run(
        [{"key": ["dragon"], "content": "x", "comment": "Dragons"}, {"key": ["unicorn"], "content": "y"}]
    )
    explained = result.to_dict()["world_info"]
    assert explained["activated"] == [
        {
            "book": "Lore",
            "uid": 0,
            "comment": "Dragons",
            "position": 0,
            "position_name": "before char",
            "order": 100,
            "pass": 1,
            "reason": 'key "dragon" in message 3',
        }
    ]
    assert explained["skipped"] == [] and explained["tokens"] > 0


def test_the_documents_timed_state_is_read_and_the_new_state_returned() -> None:
    entries = [{"key": ["dragon"], "content": "x", "sticky": 3}]
    first = run(entries, chat_length=10).to_dict()["world_info"]
    assert first["state"]
    calm = [{"role": "user", "name": "Ann", "content": "calm"}]
    second = run(entries, chat_length=11, history=calm, world_info_state=first["state"]).to_dict()[
        "world_info"
    ]
    assert [a["reason"] for a in second["activated"]] == ["sticky"]


def test_a_generation_type_reaches_the_triggers() -> None:
    entries = [{"key": ["dragon"], "content": "Only on swipes.", "triggers": ["swipe"]}]
    assert not any("Only on swipes." in m.content for m in run(entries).messages)
    assert any("Only on swipes." in m.content for m in run(entries, generation_type="swipe").messages)


def test_an_outlet_is_reported_in_native_assembly_where_nothing_can_read_it() -> None:
    result = run([{"key": ["dragon"], "content": "Side note.", "position": 7, "outletName": "side"}])
    assert not any("Side note." in m.content for m in result.messages)
    assert any("outlet “side”" in w for w in result.warnings)


def _script(**fields: Any):
    from engine.regex import compile_script, parse_script

    return compile_script(parse_script({"scriptName": "shout", "replaceString": "DRAGON", **fields}))


def test_prompt_only_world_info_scripts_rewrite_activated_entries_and_nothing_else() -> None:
    entries = [{"uid": 1, "key": ["dragon"], "content": "The dragon sleeps.", "position": 0}]
    world_info = WorldInfoInput(books=(book(*entries),))
    scripts = (
        _script(findRegex="/dragon/g", placement=[5], promptOnly=True),
        _script(scriptName="not for the prompt", findRegex="/sleeps/g", placement=[5], replaceString="x"),
    )
    result = assemble(doc(), seed=7, world_info=world_info, regex_scripts=scripts, count_tokens=False)
    everything = "\n".join(m.content for m in result.messages)
    assert "The DRAGON sleeps." in everything
    assert "tell me about the dragon" in everything  # history is not World Info: placement 5 only


def test_with_no_active_lorebook_the_timed_state_passes_through_less_what_a_swipe_undid() -> None:
    entries = [{"key": ["dragon"], "content": "x", "sticky": 3}]
    state = run(entries, chat_length=10).to_dict()["world_info"]["state"]
    without_books = WorldInfoInput(books=(), settings=WorldInfoSettings())

    def after(chat_length: int) -> dict[str, Any]:
        return assemble(
            doc(chat_length=chat_length, world_info_state=state),
            seed=7,
            world_info=without_books,
            count_tokens=False,
        ).to_dict()["world_info"]

    still = after(11)
    assert still["activated"] == [] and still["skipped"] == [] and still["tokens"] == 0
    assert still["state"] == state  # the sticky window runs on while the server has no lorebook
    assert after(10)["state"] == {}  # the message that started it was swiped away


def test_entries_of_equal_order_come_out_as_sillytavern_places_them_last_activated_first() -> None:
    # docs/assembly.md#what-sillytavern-118-corrected: SillyTavern 1.18 adds each entry in front of the ones
    # before it, so among equal orders the one activated last comes first; a lower order still comes before a
    # higher one.
    entries = [
        {"key": ["dragon"], "content": f"Lore {n}.", "position": 0, "order": order}
        for n, order in ((0, 100), (1, 100), (2, 5), (3, 100))
    ]
    result = run(entries)
    (_, _, uids), *_ = wi_parts(result)
    assert uids == [2, 3, 1, 0]


def test_at_depth_entries_are_one_text_trimmed_at_its_ends_only_as_in_sillytavern() -> None:
    # SillyTavern 1.18 joins a depth's entries with newlines and trims the whole: a blank line
    # ending one entry stays between it and the next
    entries = [
        {"key": ["dragon"], "content": "First.\n\n", "position": 4, "depth": 1, "order": 1},
        {"key": ["dragon"], "content": "  Second.", "position": 4, "depth": 1, "order": 2},
    ]
    preset = build_preset([make_node("main", content="MAIN"), marker("chatHistory")])
    result = run(entries, preset=preset, style="standalone")
    assert "First.\n\n\n  Second." in [m.content for m in result.messages]
