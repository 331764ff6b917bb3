"""docs/import.md#recognised-shapes, shapes 3–4 and docs/import.md#story-strings: text-completion presets
(story strings) and lone system prompts to nodes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.st_format.chat_template import TokenStripper, instruct_sequences
from engine.st_format.model import PresetNode
from engine.st_format.prompt_manager import Converted, synthetic_node
from engine.st_format.wording import Findings, short_list

# Story-string block name -> the marker it becomes ("main" is the system prompt slot).
BLOCK_TARGETS = {
    "system": "main",
    "wibefore": "worldInfoBefore",
    "lorebefore": "worldInfoBefore",
    "wiafter": "worldInfoAfter",
    "loreafter": "worldInfoAfter",
    "description": "charDescription",
    "personality": "charPersonality",
    "scenario": "scenario",
    "persona": "personaDescription",
    "mesexamples": "dialogueExamples",
}
DROPPED_BLOCKS = frozenset({"anchorbefore", "anchorafter"})
_PLACEHOLDER_NAMES = "|".join(
    (
        "system",
        "wiBefore",
        "loreBefore",
        "wiAfter",
        "loreAfter",
        "description",
        "personality",
        "scenario",
        "persona",
        "mesExamples",
        "anchorBefore",
        "anchorAfter",
    )
)
_TOKEN = re.compile(
    r"\{\{\s*+#if\s++([^{}]*+)\}\}"  # 1: block open (possessive: no backtracking on long runs)
    r"|\{\{\s*/if\s*\}\}"  # block close
    rf"|\{{\{{\s*({_PLACEHOLDER_NAMES})\s*\}}\}}",  # 2: a bare placeholder outside any block
    re.IGNORECASE,
)
_NESTED_TAG = re.compile(r"\{\{\s*+(?:#if\s++[^{}]*+|/if\s*+)\}\}", re.IGNORECASE)
STORY_TEXT = "Story text"


@dataclass(frozen=True, slots=True)
class Piece:
    """A top-level part of a story string: plain text, or a block (`name` set) with its inner text."""

    text: str
    name: str | None = None


def split_story_string(story: str, findings: Findings) -> list[Piece]:
    """The story string as top-level text and outermost `{{#if}}` blocks, in order."""
    pieces: list[Piece] = []
    depth = 0
    text_start = 0
    block_name = ""
    block_start = 0
    for match in _TOKEN.finditer(story):
        opened, bare = match.group(1), match.group(2)
        if bare is not None:
            if depth == 0:
                pieces.append(Piece(story[text_start : match.start()]))
                pieces.append(Piece(match.group(0), name=bare))
                text_start = match.end()
            continue
        if opened is not None:
            if depth == 0:
                pieces.append(Piece(story[text_start : match.start()]))
                block_name, block_start = opened.strip(), match.end()
            depth += 1
            continue
        if depth == 0:
            findings.add("A `{{/if}}` without its `{{#if}}` in the story string, removed", "story string")
            pieces.append(Piece(story[text_start : match.start()]))
            text_start = match.end()
            continue
        depth -= 1
        if depth == 0:
            pieces.append(Piece(story[block_start : match.start()], name=block_name))
            text_start = match.end()
    if depth > 0:
        findings.add("A block that is never closed, taken to the end of the story string", block_name)
        pieces.append(Piece(story[block_start:], name=block_name))
    else:
        pieces.append(Piece(story[text_start:]))
    return [p for p in pieces if p.name is not None or p.text]


def _split_at_placeholder(inner: str, name: str) -> tuple[str, str, bool]:
    """(prefix, suffix, found): the block's text before and after its own `{{name}}` placeholder."""
    match = re.search(r"\{\{\s*" + re.escape(name) + r"\s*\}\}", inner, re.IGNORECASE)
    if match is None:
        return inner, "", False
    return inner[: match.start()], inner[match.end() :], True


class _Builder:
    """Accumulates converted nodes; synthetic content nodes get stable identifiers legacy_1, legacy_2, …"""

    def __init__(self, strip: TokenStripper) -> None:
        self.nodes: list[PresetNode] = []
        self.used: set[str] = set()
        self.counter = 0
        self.strip = strip

    def content(self, text: str, name: str = STORY_TEXT) -> None:
        text = self.strip.strip(text)
        if not text.strip():
            return
        self.counter += 1
        self.nodes.append(synthetic_node(f"legacy_{self.counter}", name=name, content=text))

    def slot(self, identifier: str, **kwargs: Any) -> None:
        self.used.add(identifier)
        self.nodes.append(synthetic_node(identifier, **kwargs))


def _text_at(container: Any, key: str) -> str | None:
    """`container[key]` when the container is an object and that is text, else None."""
    value = container.get(key) if isinstance(container, dict) else None
    return value if isinstance(value, str) else None


def system_prompt_text(data: dict[str, Any]) -> str | None:
    """The system prompt a text-completion preset carries: sysprompt, a root name+content, or instruct."""
    sysprompt = _text_at(data.get("sysprompt"), "content")
    if sysprompt is not None:
        return sysprompt
    content = _text_at(data, "content")
    if content is not None and "name" in data:
        return content
    instruct = _text_at(data.get("instruct"), "system_prompt")
    if instruct is not None:
        return instruct
    return _text_at(data, "system_prompt")


def story_string_of(data: dict[str, Any]) -> str | None:
    """The story string at `context.story_string` or the root, if any."""
    in_context = _text_at(data.get("context"), "story_string")
    return in_context if in_context is not None else _text_at(data, "story_string")


def _add_block(builder: _Builder, piece: Piece, system_text: str, findings: Findings) -> None:
    key = (piece.name or "").lower()
    if key in DROPPED_BLOCKS:
        findings.add("Anchor blocks have no equivalent here and were dropped", piece.name or "")
        return
    inner = piece.text
    if _NESTED_TAG.search(inner):
        findings.add("Nested blocks flattened into their outer block", piece.name or "")
        inner = _NESTED_TAG.sub("", inner)
    target = BLOCK_TARGETS.get(key)
    if target is None:
        findings.add("Unknown story-string blocks kept as text", piece.name or "")
        builder.content(inner, name=f"{piece.name} block")
        return
    if target in builder.used:
        findings.add("Blocks that appear twice, the later one kept as text", piece.name or "")
        builder.content(inner, name=f"{piece.name} block")
        return
    prefix, suffix, found = _split_at_placeholder(inner, piece.name or "")
    if target == "main":
        if found:
            builder.content(prefix)
            builder.slot("main", content=builder.strip.strip(system_text))
            builder.content(suffix)
        else:
            builder.content(inner)
            builder.slot("main", content=builder.strip.strip(system_text))
        return
    builder.slot(
        target, kind="marker", prefix=builder.strip.strip(prefix), suffix=builder.strip.strip(suffix)
    )


def convert_story_string(data: dict[str, Any], story: str) -> Converted:
    """Nodes for a text-completion preset: its story string's blocks in order, then chatHistory
    (docs/import.md#story-strings)."""
    findings = Findings()
    strip = TokenStripper(instruct_sequences(data.get("instruct")))
    builder = _Builder(strip)
    system_text = system_prompt_text(data) or ""
    for piece in split_story_string(story, findings):
        if piece.name is None:
            builder.content(piece.text)
        else:
            _add_block(builder, piece, system_text, findings)
    warnings: list[str] = []
    if "main" not in builder.used and system_text.strip():
        builder.nodes.insert(0, synthetic_node("main", content=strip.strip(system_text)))
        warnings.append("The story string has no system block, so the system prompt was placed first.")
    if "chatHistory" not in builder.used:
        builder.slot("chatHistory", kind="marker")
    if strip.removed:
        warnings.append(
            f"Chat-template tokens were removed from the converted text: {short_list(strip.removed)}."
        )
    warnings.extend(findings.sentences())
    return Converted(
        nodes=tuple(builder.nodes),
        not_in_order=0,
        warnings=tuple(warnings),
        notes=("converted from a text-completion preset",),
    )


def convert_system_prompt(data: dict[str, Any], text: str) -> Converted:
    """Nodes for a lone system prompt (or an old instruct template's): `main`, then chatHistory."""
    strip = TokenStripper(instruct_sequences(data.get("instruct")))
    nodes = (synthetic_node("main", content=strip.strip(text)), synthetic_node("chatHistory", kind="marker"))
    warnings: tuple[str, ...] = ()
    if strip.removed:
        warnings = (
            f"Chat-template tokens were removed from the converted text: {short_list(strip.removed)}.",
        )
    return Converted(
        nodes=nodes, not_in_order=0, warnings=warnings, notes=("converted from a system-prompt preset",)
    )
