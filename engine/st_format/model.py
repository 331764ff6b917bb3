"""The data an import produces: nodes, prompt settings, the summary and the parsed preset.

Pure dataclasses: no Django, no I/O. Everything here is picklable and JSON-friendly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..errors import EngineError


class ImportRefused(EngineError):
    """The upload is not an importable preset; `message` is one sentence to show the user as is."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class PresetNode:
    """One entry of the preset's prompt order."""

    identifier: str
    name: str
    kind: str  # "marker" | "content" | "comment"
    role: str  # "system" | "user" | "assistant"
    content: str
    enabled: bool
    injection_position: int  # 0 relative, 1 depth
    injection_depth: int
    injection_order: int
    injection_trigger: tuple[str, ...]
    forbid_overrides: bool
    prefix: str = ""  # legacy markers: emitted around the block only when it is non-empty
    suffix: str = ""

    @property
    def toggleable(self) -> bool:
        """True for every node the summary counts as switchable: all but comments and chatHistory."""
        return self.kind != "comment" and self.identifier != "chatHistory"

    @property
    def switchable(self) -> bool:
        """True for every node a user may switch on or off, chatHistory included (off, SillyTavern 1.18
        sends no conversation); the counts leave chatHistory out (`toggleable`)."""
        return self.kind != "comment"

    @property
    def is_depth_injection(self) -> bool:
        """True for a non-marker node placed relative to the end of the chat history."""
        return self.kind != "marker" and self.injection_position == 1

    def to_dict(self) -> dict[str, Any]:
        """The node as a JSON-serialisable dict (the trigger becomes a list)."""
        d = asdict(self)
        d["injection_trigger"] = list(self.injection_trigger)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PresetNode:
        """A node from `to_dict()` output; unknown keys are ignored."""
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        kw["injection_trigger"] = tuple(kw.get("injection_trigger") or ())
        return cls(**kw)


# Our own wording, for a preset that does not carry these prompts (nearly every export does).
DEFAULT_CONTINUE_NUDGE = (
    "[Continue the following message from exactly where it stops, without repeating any of it: "
    "{{lastChatMessage}}]"
)
DEFAULT_IMPERSONATION = (
    "[Write {{user}}'s next message in {{user}}'s own voice and style, as the conversation so far shows "
    "it. Do not write for {{char}}.]"
)


@dataclass(frozen=True, slots=True)
class PromptSettings:
    """Top-level preset settings that shape the prompt; defaults are SillyTavern's."""

    squash_system_messages: bool = False
    personality_format: str = "{{personality}}"
    scenario_format: str = "{{scenario}}"
    wi_format: str = "{0}"
    new_example_chat_prompt: str = "[Example Chat]"
    # a system message right before the history (docs/assembly.md#what-sillytavern-118-corrected)
    new_chat_prompt: str = "[Start a new Chat]"
    # Its place in a group chat (docs/groups.md), and the group nudge at the end of the history.
    new_group_chat_prompt: str = "[Start a new group chat. Group members: {{group}}]"
    group_nudge_prompt: str = "[Write the next reply only as {{char}}.]"
    # Where speaker names go (SillyTavern's names_behavior): -1 none, 0 default, 1 the `name` field
    # ("completion"), 2 "Name: " in every history message's content.
    names_behavior: int = 0
    # Nodes made from a text-completion or lone system-prompt preset: a block the nodes have no marker for
    # stays a leftover before the history (docs/assembly.md#order-of-work) instead of SillyTavern's Prompt
    # Manager tail (docs/assembly.md#what-sillytavern-118-corrected).
    converted: bool = False
    # Generation types and prefill (docs/assembly.md#generation-types-and-prefill).
    assistant_prefill: str = ""
    assistant_impersonation: str = ""
    continue_prefill: bool = False
    continue_nudge_prompt: str = DEFAULT_CONTINUE_NUDGE
    impersonation_prompt: str = DEFAULT_IMPERSONATION
    # Sent as the user's message when a normal generation follows the character's (docs/assembly.md).
    send_if_empty: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (without `converted`: the stored shape says it, see
        presets.selectors.prompt_settings)."""
        d = asdict(self)
        del d["converted"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> PromptSettings:
        """Settings from a dict; missing or unknown keys fall back to the defaults."""
        if not d:
            return cls()
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


_TUPLE_FIELDS = (
    "hidden_blocks",
    "unsupported_macros",
    "html_nodes",
    "kept_not_applied",
    "sampler_settings",
    "secrets_blanked",
    "warnings",
    "notes",
    "import_warnings",
)


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """What an import found (docs/import.md#the-import-summary); JSON-serialisable via
    to_dict()/from_dict()."""

    shape: str
    nodes: int
    markers: int
    content: int
    comments: int
    toggleable: int
    enabled: int
    depth_injections: int
    not_in_order: int
    hidden_blocks: tuple[str, ...] = ()
    unsupported_macros: tuple[str, ...] = ()
    html_nodes: tuple[str, ...] = ()
    kept_not_applied: tuple[str, ...] = ()
    sampler_settings: tuple[
        str, ...
    ] = ()  # the sampler settings the file sets (sent per the server's choice)
    secrets_blanked: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # The warnings found while parsing the file; `warnings` adds those derived from the nodes' current
    # state, so a recount after toggling nodes (summarize/resummarize) starts again from these.
    import_warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The summary as a JSON-serialisable dict (tuples become lists)."""
        d = asdict(self)
        for key in _TUPLE_FIELDS:
            d[key] = list(d[key])
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ImportSummary:
        """A summary from `to_dict()` output; unknown keys are ignored."""
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        for key in _TUPLE_FIELDS:
            kw[key] = tuple(kw.get(key) or ())
        return cls(**kw)


@dataclass(frozen=True, slots=True)
class ParsedPreset:
    """A successfully imported preset, ready to store."""

    name: str  # from the file name (docs/import.md#input-checks); the caller may override
    shape: str
    nodes: tuple[PresetNode, ...]
    settings: PromptSettings
    summary: ImportSummary
    stored_text: str  # the upload as text, secrets blanked, key order preserved
    sampling: dict[str, Any] = field(default_factory=dict)  # SamplerSettings.to_dict()
