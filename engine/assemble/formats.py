"""A preset's format settings, macro-rendered as SillyTavern renders them
(docs/assembly.md#what-sillytavern-118-corrected).

`personality_format` and `scenario_format` are templates around the personality and the scenario;
`new_chat_prompt` opens the history and `new_example_chat_prompt` opens each sample dialogue. All
four go through the macro engine after the preset's nodes, in SillyTavern's order, so `{{trim}}`,
`{{char}}` or a variable in them does what it does in a node. A format that is just its
placeholder with text around it needs no render: the block keeps its own parts, wrapped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.bounded import MiB, text_cache

from ..macros import MacroEnv, RenderOutput, render_texts
from ..parts import Notes
from ..st_format import PromptSettings

# setting -> the block tag its template wraps and the placeholder it wraps around
WRAPPING = {
    "scenario_format": ("SYSTEM_SCENARIO", "{{scenario}}"),
    "personality_format": ("SYSTEM_PERSONALITY", "{{personality}}"),
}
OPENERS = ("new_chat_prompt", "new_example_chat_prompt")
_IDENTITY = re.compile(r"\{\{\s*(?i:user|char|bot)\s*\}\}")


@dataclass(frozen=True, slots=True)
class Formats:
    """The rendered settings: whole block texts for the formats that needed a render (by block
    tag), the two openers' texts, and the render's variable state (None when nothing rendered)."""

    blocks: Mapping[str, str]
    new_chat: str  # in a group, the new_group_chat_prompt (docs/groups.md)
    new_example_chat: str
    render: RenderOutput | None = None
    group_nudge: str = ""  # in a group only


@text_cache(max_entries=1024, max_bytes=16 * MiB)  # a preset's few settings, asked on every assembly
def plain_wrap(template: str, placeholder: str) -> bool:
    """True when the template is its placeholder once with text around it that holds no macro but
    the identity ones (resolved at the end in any case), or when it is empty."""
    if not template:
        return True
    before, found, after = template.partition(placeholder)
    return bool(found) and _identity_only(before) and _identity_only(after)


@text_cache(max_entries=1024, max_bytes=16 * MiB)
def _identity_only(text: str) -> bool:
    return "{{" not in text or "{{" not in _IDENTITY.sub("", text)


def render_formats(
    settings: PromptSettings,
    present: frozenset[str],
    *,
    env: MacroEnv,
    seed: int,
    variables: Mapping[str, Any],
    global_variables: Mapping[str, Any],
    notes: Notes,
    group: bool = False,
) -> Formats:
    """The format settings rendered; `present` names the block tags the document has (a format
    renders only around a block that is there, as in SillyTavern). In a group, the new-chat opener is
    `new_group_chat_prompt` and the group nudge is rendered too."""
    wanted: list[tuple[str, str]] = []
    for setting, (tag, placeholder) in WRAPPING.items():
        template = getattr(settings, setting)
        if tag in present and not plain_wrap(template, placeholder):
            wanted.append((setting, template))
    openers = {key: getattr(settings, key) for key in OPENERS}
    if group:
        openers["new_chat_prompt"] = settings.new_group_chat_prompt
        openers["group_nudge_prompt"] = settings.group_nudge_prompt
    wanted.extend((key, text) for key, text in openers.items() if not _identity_only(text))
    nudge = openers.get("group_nudge_prompt", "")
    if not wanted:
        return Formats({}, openers["new_chat_prompt"], openers["new_example_chat_prompt"], None, nudge)
    render = render_texts(
        wanted,
        env=env,
        seed=seed,
        variables=variables,
        global_variables=global_variables,
    )
    for warning in render.warnings:
        notes.warn(warning)
    texts = {segment.key: segment.text for segment in render.segments}
    blocks = {WRAPPING[key][0]: text for key, text in texts.items() if key in WRAPPING}
    return Formats(
        blocks,
        texts.get("new_chat_prompt", openers["new_chat_prompt"]),
        texts.get("new_example_chat_prompt", openers["new_example_chat_prompt"]),
        render,
        texts.get("group_nudge_prompt", nudge),
    )
