"""Hypothesis strategies for hostile input: preset-shaped JSON, macro soup, bucket documents, raw bytes.

Shared by the CI fuzz tests (few examples) and `bench/fuzz.py` (10,000+ examples per target).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

# Fragments a macro parser must survive in any order: openers without closers, nesting, separators.
MACRO_PIECES = [
    "{{",
    "}}",
    "{",
    "}",
    "::",
    ":",
    ",",
    "\\,",
    " ",
    "\n",
    "{{//",
    "{{trim}}",
    "{{newline}}",
    "setvar",
    "getvar",
    "addvar",
    "incvar",
    "decvar",
    "deletevar",
    "setglobalvar",
    "getglobalvar",
    "each",
    "/each",
    "loop_key",
    "loop_value",
    "random",
    "pick",
    "roll",
    "1d6",
    "100d1000",
    "999999d999999",
    "user",
    "char",
    "<USER>",
    "<BOT>",
    "time",
    "datetimeformat",
    "YYYY",
    "summary",
    "description",
    "personality",
    "mesExamples",
    "idle_duration",
    "x",
    "a.b.0",
    "__proto__",
    "[1,2]",
    '{"k":{"v":1}}',
    "-1",
    "1e309",
    "NaN",
    "\x00",
    "\ud7ff",
    "é",
    "🙂",
    "<script>",
    "{{7*7}}",
    "${x}",
]

macro_text = st.lists(st.one_of(st.sampled_from(MACRO_PIECES), st.text(max_size=8)), max_size=40).map("".join)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    macro_text,
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)

IDENTIFIERS = [
    "main",
    "nsfw",
    "jailbreak",
    "enhanceDefinitions",
    "chatHistory",
    "worldInfoBefore",
    "worldInfoAfter",
    "charDescription",
    "charPersonality",
    "scenario",
    "personaDescription",
    "dialogueExamples",
    "custom",
]
maybe_number = st.one_of(json_scalars, st.sampled_from([" 90 ", "4", "-5", "2147483648", "1.5", ""]))

prompt = st.fixed_dictionaries(
    {},
    optional={
        "identifier": st.one_of(st.sampled_from(IDENTIFIERS), st.text(max_size=10), json_scalars),
        "name": st.one_of(st.text(max_size=20), json_scalars),
        "role": st.one_of(st.sampled_from(["system", "user", "assistant", "", "bogus"]), json_scalars),
        "content": st.one_of(macro_text, json_scalars),
        "marker": st.one_of(st.booleans(), json_scalars),
        "enabled": st.one_of(st.booleans(), json_scalars),
        "system_prompt": st.booleans(),
        "injection_position": maybe_number,
        "injection_depth": maybe_number,
        "injection_order": maybe_number,
        "injection_trigger": st.one_of(
            st.lists(st.sampled_from(["normal", "continue", "swipe"])), json_values
        ),
        "forbid_overrides": st.one_of(st.booleans(), json_scalars),
    },
)
order_entry = st.fixed_dictionaries(
    {},
    optional={
        "identifier": st.one_of(st.sampled_from(IDENTIFIERS), json_scalars),
        "enabled": st.one_of(st.booleans(), json_scalars),
    },
)
prompt_order = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "character_id": st.one_of(st.sampled_from([100000, 100001, "100001", -1]), json_scalars),
            "order": st.one_of(st.lists(order_entry, max_size=12), json_values),
        },
    ),
    max_size=3,
)
LEGACY_KEYS = [
    "main_prompt",
    "nsfw_prompt",
    "jailbreak_prompt",
    "story_string",
    "post_history",
    "content",
    "name",
    "system_prompt",
    "input_sequence",
    "output_sequence",
    "temperature",
    "entries",
    "spec",
    "data",
    "squash_system_messages",
    "personality_format",
    "scenario_format",
    "wi_format",
    "new_example_chat_prompt",
    "reverse_proxy",
    "proxy_password",
    "custom_url",
]
story_string = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "{{#if system}}",
                "{{system}}",
                "{{/if}}",
                "{{#if description}}",
                "{{description}}",
                "{{#if wiBefore}}",
                "{{#if anchorBefore}}",
                "{{#if mystery}}",
                "<|im_start|>system\n",
                "<|im_end|>",
                "[INST]",
                "[/INST]",
                "<s>",
                "{{char}}'s personality: ",
                "{{personality}}",
            ]
        ),
        st.text(max_size=8),
    ),
    max_size=30,
).map("".join)

preset_dicts = st.fixed_dictionaries(
    {},
    optional={
        "prompts": st.one_of(st.lists(prompt, max_size=14), json_values),
        "prompt_order": st.one_of(prompt_order, json_values),
        "context": st.one_of(st.fixed_dictionaries({"story_string": story_string}), json_values),
        "sysprompt": st.one_of(
            st.fixed_dictionaries({}, optional={"content": macro_text, "post_history": macro_text}),
            json_values,
        ),
        "instruct": json_values,
        **{key: st.one_of(macro_text, story_string, json_values) for key in LEGACY_KEYS},
    },
)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


preset_uploads = st.one_of(
    preset_dicts.map(_dumps),
    json_values.map(_dumps),
    st.binary(max_size=300),
    preset_dicts.map(_dumps).flatmap(
        lambda raw: st.integers(0, max(0, len(raw) - 1)).map(lambda cut: raw[:cut])  # a truncated upload
    ),
    st.sampled_from([b"\xef\xbb\xbf{}", b"[" * 5000, b'{"a":' * 3000, b"NaN", b'{"prompts":[NaN]}', b""]),
)

BUCKET_KEYS = [
    "version",
    "names",
    "system_prompt",
    "channel_prompt",
    "persona_prompt",
    "personality",
    "server_info",
    "server_memories",
    "emojis",
    "stickers",
    "users_in_conversation",
    "documents",
    "conditioning",
    "sample_dialogues",
    "history",
    "short_term_memory",
    "tail_directives",
    "stm_context",
    "budget",
    "impersonation",
    "now",
    "timezone",
    "seed",
    "variables",
    "global_variables",
    "items",
]
history_message = st.fixed_dictionaries(
    {},
    optional={
        "role": st.one_of(st.sampled_from(["user", "assistant", "system"]), json_scalars),
        "name": json_scalars,
        "content": st.one_of(macro_text, json_scalars),
        "timestamp": st.one_of(
            st.sampled_from(["2026-11-21T20:07:00Z", "not a date", "2026-13-45"]), json_scalars
        ),
    },
)
bucket_documents = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            **{key: json_values for key in BUCKET_KEYS},
            "history": st.one_of(st.lists(history_message, max_size=6), json_values),
            "timezone": st.one_of(st.sampled_from(["UTC", "Europe/Paris", "Mars/Olympus", ""]), json_values),
            "budget": st.one_of(
                st.fixed_dictionaries({"context": json_scalars, "reply": json_scalars}), json_values
            ),
            "version": st.one_of(st.just(1), json_scalars),
        },
    ),
    json_values,
)

_DEFAULT_DOCUMENT = json.loads(
    (
        __import__("pathlib").Path(__file__).resolve().parents[2] / "assembly" / "default_buckets.json"
    ).read_text()
)
# Mostly-valid documents: the default sample with some keys replaced by hostile values.
near_valid_documents = st.dictionaries(
    st.sampled_from(sorted(_DEFAULT_DOCUMENT)), st.one_of(json_values, macro_text), max_size=3
).map(lambda changes: {**_DEFAULT_DOCUMENT, **changes})
assembly_inputs = st.tuples(
    preset_dicts.map(_dumps),
    st.one_of(near_valid_documents, bucket_documents),
    st.sampled_from(["merge", "standalone"]),
    st.sampled_from(["", "openai", "anthropic", "gemini"]),
)
