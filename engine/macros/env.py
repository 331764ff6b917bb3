"""What a render reads (MacroEnv, Segment) and what it returns (SegmentOutput, RenderOutput)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .parser import CompiledText

# The content macros whose non-empty expansion the assembler uses to drop duplicate native blocks.
CONTENT_BLOCKS = ("description", "personality", "mesExamples", "summary")
DEFAULT_CONTEXT = 16_384  # {{maxContext}} when the document gives no budget (the server's default)


@dataclass(frozen=True, slots=True)
class MacroEnv:
    """Everything the content and clock macros read; every field defaults to empty."""

    personality: str = ""  # {{personality}}
    description: str = ""  # {{description}}
    mes_examples: str = ""  # {{mesExamples}}
    mes_examples_raw: str = ""  # {{mesExamplesRaw}}
    last_user_message: str = ""  # {{lastUserMessage}} and {{lastChatMessage}}
    last_message: str = ""  # {{lastMessage}}
    last_char_message: str = ""  # {{lastCharMessage}}
    summary: str = ""  # {{summary}}
    scenario: str = ""  # {{scenario}}: the document's, else the active card's
    persona: str = ""  # {{persona}}: the document's user_persona
    # The active card's other fields, as SillyTavern 1.18's character macros read them (trimmed):
    char_prompt: str = ""  # {{charPrompt}}: its system prompt
    char_instruction: str = ""  # {{charInstruction}}: its post-history instructions
    char_depth_prompt: str = ""  # {{charDepthPrompt}}
    creator_notes: str = ""  # {{charCreatorNotes}} / {{creatorNotes}}
    first_message: str = ""  # {{charFirstMessage}} / {{greeting}}; {{greeting::n}} an alternate greeting
    alternate_greetings: tuple[str, ...] = ()
    char_version: str = ""  # {{charVersion}} / {{version}} / {{char_version}}
    now: datetime | None = None  # aware; None = the real time at render
    timezone: str = "UTC"
    user_message_times: tuple[datetime, ...] = ()  # for {{idle_duration}}
    server_id: int = 0  # seeds {{pick}}
    # {{reasoningPrefix}}: the preset's, else this default (docs/regex.md#where-they-run)
    reasoning_prefix: str = "<think>"
    reasoning_suffix: str = "</think>"  # {{reasoningSuffix}}
    outlets: Mapping[str, str] = field(default_factory=dict)  # {{outlet::name}}: World Info outlet texts
    # What SillyTavern 1.18's request macros read (docs/macros.md):
    model: str = ""  # {{model}}: the document's model name
    max_context: int = DEFAULT_CONTEXT  # {{maxContext}}: the document's budget context
    max_response: int = 0  # {{maxResponse}}: its reply reserve ({{maxPrompt}} is the difference)
    history_count: int = 0  # {{lastMessageId}}, {{allChatRange}}: messages in the history
    generation_type: str = "normal"  # {{lastGenerationType}}
    last_chat_message: str | None = None  # {{lastChatMessage}}: only in the continue nudge, else unknown


@dataclass(frozen=True, slots=True)
class Segment:
    """One unit to render, e.g. one preset node; `key` is its identifier (it seeds {{pick}})."""

    key: str
    template: CompiledText
    # What a render gives the template whatever it reads, when its only macros are identity macros (left
    # for the end), and how many there are (each counts toward the pass's evaluations): render.static_text.
    static: str | None = None
    identities: int = 0
    # Made once with the segment: True when its text holds no macro (its output is its text, never
    # rendered); the output a render does without (that text, or `static`), else None.
    plain: bool = field(init=False, repr=False, compare=False, default=False)
    fixed: SegmentOutput | None = field(init=False, repr=False, compare=False, default=None)
    # The segment's last render by label (render._Kept), reused by a pass that would render it the same.
    kept: dict[bool, Any] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        template = self.template
        plain = not template.has_macros and not template.warnings
        object.__setattr__(self, "plain", plain)
        if plain:
            object.__setattr__(self, "fixed", SegmentOutput(self.key, template.source))
        elif self.static is not None:
            object.__setattr__(self, "fixed", SegmentOutput(self.key, self.static))


@dataclass(frozen=True, slots=True)
class SegmentOutput:
    """The rendered text of one segment, deferred identity macros still in place."""

    key: str
    text: str
    expanded: frozenset[str] = frozenset()  # subset of CONTENT_BLOCKS that produced non-empty text


@dataclass(slots=True)  # one or two per assembly: not frozen, as engine.parts explains; a value all the same
class RenderOutput:
    """The result of a render: segment texts, the variable state after it, warnings."""

    segments: tuple[SegmentOutput, ...]
    variables: dict[str, Any] = field(default_factory=dict)
    global_variables: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    unknown_macros: frozenset[str] = frozenset()

    @property
    def text(self) -> str:
        """All segment texts joined with newlines (the whole of a one-segment render)."""
        return "\n".join(segment.text for segment in self.segments)
