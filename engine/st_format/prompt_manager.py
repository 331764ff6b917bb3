"""docs/import.md#recognised-shapes, shapes 1–2 and docs/import.md#prompt-manager-presets: Prompt Manager
presets (and the older chat presets before it) to nodes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.st_format import fields
from engine.st_format.kinds import DEFAULT_NAMES, KNOWN_IDENTIFIERS, is_comment_only
from engine.st_format.model import PresetNode
from engine.st_format.wording import Findings

CHARACTER_ORDER_IDS = (100001, 100000)  # SillyTavern's "global" order, then its default one

# The SillyTavern default order an old (pre-Prompt-Manager) chat preset is converted to.
PRE_PM_ORDER = (
    ("main", "main_prompt"),
    ("worldInfoBefore", None),
    ("personaDescription", None),
    ("charDescription", None),
    ("charPersonality", None),
    ("scenario", None),
    ("nsfw", "nsfw_prompt"),
    ("worldInfoAfter", None),
    ("dialogueExamples", None),
    ("chatHistory", None),
    ("jailbreak", "jailbreak_prompt"),
)
PRE_PM_KEYS = tuple(key for _, key in PRE_PM_ORDER if key)


@dataclass(frozen=True, slots=True)
class Converted:
    """Nodes converted from one shape, plus what the conversion had to say."""

    nodes: tuple[PresetNode, ...]
    not_in_order: int
    warnings: tuple[str, ...]
    notes: tuple[str, ...] = ()


def content_kind(text: str) -> str:
    """`comment` for text made only of comments and {{trim}}, else `content`."""
    return "comment" if is_comment_only(text) else "content"


def synthetic_node(
    identifier: str,
    *,
    content: str = "",
    name: str | None = None,
    kind: str | None = None,
    role: str = "system",
    injection_position: int = 0,
    injection_depth: int = fields.DEFAULT_DEPTH,
    injection_order: int = fields.DEFAULT_ORDER,
    prefix: str = "",
    suffix: str = "",
) -> PresetNode:
    """A node the importer creates itself (converted shapes), enabled, with SillyTavern's defaults."""
    return PresetNode(
        identifier=identifier,
        name=name or DEFAULT_NAMES.get(identifier, identifier),
        kind=kind or content_kind(content),
        role=role,
        content=content,
        enabled=True,
        injection_position=injection_position,
        injection_depth=injection_depth,
        injection_order=injection_order,
        injection_trigger=(),
        forbid_overrides=False,
        prefix=prefix,
        suffix=suffix,
    )


def _node_from_prompt(
    prompt: dict[str, Any], identifier: str, enabled: bool, findings: Findings
) -> PresetNode:
    name_text, _ = fields.text_field(prompt.get("name"))
    name = name_text.strip() or identifier
    content, content_ok = fields.text_field(prompt.get("content"))
    is_marker = fields.flag(prompt.get("marker"))
    # A marker SillyTavern does not know is a prompt like any other when its system_prompt flag is
    # off: SillyTavern 1.18 sends its text (docs/assembly.md#what-sillytavern-118-corrected). With the flag on
    # it sends nothing.
    sent_as_prompt = (
        is_marker and identifier not in KNOWN_IDENTIFIERS and prompt.get("system_prompt") is False
    )
    if sent_as_prompt:
        is_marker = False
        findings.add("Unrecognised markers, sent as prompts as SillyTavern 1.18 sends them", name)
    kind = "marker" if is_marker else content_kind(content)
    role, role_ok = fields.role_field(prompt.get("role"))
    position, position_ok = fields.position_field(prompt)
    depth, depth_ok = fields.int_field(prompt, "injection_depth", fields.DEFAULT_DEPTH)
    order, order_ok = fields.int_field(prompt, "injection_order", fields.DEFAULT_ORDER)
    trigger, trigger_ok = fields.trigger_field(prompt.get("injection_trigger"))
    if not content_ok:
        findings.add("Content that is not text, treated as empty", name)
    if not role_ok and not is_marker:
        findings.add("Missing or unknown role, sent as system", name)
    if not position_ok:
        findings.add("Injection position other than 0 or 1, placed in order instead", name)
    if not depth_ok:
        findings.add(f"Injection depth that is not a whole number, {fields.DEFAULT_DEPTH} used", name)
    if not order_ok:
        findings.add(f"Injection order that is not a whole number, {fields.DEFAULT_ORDER} used", name)
    if not trigger_ok:
        findings.add("Injection trigger entries that are not generation types, dropped", name)
    if is_marker and identifier not in KNOWN_IDENTIFIERS:
        findings.add("Unrecognised markers, skipped at assembly", name)
    if (
        enabled
        and not is_marker
        and identifier not in KNOWN_IDENTIFIERS
        and position_ok
        and position != 1
        and prompt.get("system_prompt") is True
    ):
        # SillyTavern 1.18 sends a prompt of the preset's own only when its system_prompt flag is
        # off; one flagged as a system prompt never reaches the model there. (A hand-written file
        # without the flag keeps its prompts: SillyTavern itself always writes it.)
        enabled = False
        findings.add(
            "Prompts marked as system prompts, which SillyTavern 1.18 never sends: imported switched off",
            name,
        )
    return PresetNode(
        identifier=identifier,
        name=name,
        kind=kind,
        role=role,
        content=content,
        enabled=enabled,
        injection_position=position,
        injection_depth=depth,
        injection_order=order,
        injection_trigger=trigger,
        forbid_overrides=fields.flag(prompt.get("forbid_overrides")),
    )


def _prompts_by_identifier(prompts: list[Any], findings: Findings) -> dict[str, dict[str, Any]]:
    """Prompts keyed by identifier, first occurrence winning, in array order."""
    by_id: dict[str, dict[str, Any]] = {}
    for index, prompt in enumerate(prompts, start=1):
        if not isinstance(prompt, dict):
            findings.add("Entries of `prompts` that are not objects, skipped", f"#{index}")
            continue
        raw_id = prompt.get("identifier")
        identifier = raw_id.strip() if isinstance(raw_id, str) else ""
        if not identifier and isinstance(raw_id, (int, float)) and not isinstance(raw_id, bool):
            identifier = str(raw_id)
        if not identifier:
            identifier = f"prompt_{index}"
            label = (
                prompt.get("name") if isinstance(prompt.get("name"), str) and prompt["name"].strip() else ""
            )
            findings.add(
                "Prompts without an identifier, given one",
                f"{label.strip()} ({identifier})" if label else identifier,
            )
        if identifier in by_id:
            findings.add("Duplicate prompt identifiers, first one kept", identifier)
            continue
        by_id[identifier] = prompt
    return by_id


def choose_order(prompt_order: Any) -> tuple[list[Any] | None, int | None]:
    """The order list of character 100001, else 100000, and which one; (None, None) for array order."""
    if not isinstance(prompt_order, list):
        return None, None
    by_character: dict[int, Any] = {}
    for entry in prompt_order:
        if isinstance(entry, dict):
            character = fields.whole_number(entry.get("character_id"))
            if character is not None and character not in by_character:
                by_character[character] = entry.get("order")
    for character in CHARACTER_ORDER_IDS:
        order = by_character.get(character)
        if isinstance(order, list):
            return order, character
    return None, None


def _order_entry(entry: Any) -> tuple[str, bool] | None:
    """(identifier, enabled) of one order entry; a bare string counts as an enabled identifier."""
    if isinstance(entry, str):
        return (entry.strip(), True) if entry.strip() else None
    if isinstance(entry, dict) and isinstance(entry.get("identifier"), str) and entry["identifier"].strip():
        return entry["identifier"].strip(), fields.enabled_flag(entry.get("enabled"))
    return None


def parse_prompt_manager(data: dict[str, Any]) -> Converted:
    """Nodes of a Prompt Manager preset in its chosen order (docs/import.md#prompt-manager-presets)."""
    findings = Findings()
    by_id = _prompts_by_identifier(data["prompts"], findings)
    order, character = choose_order(data.get("prompt_order"))
    nodes: list[PresetNode] = []
    notes: list[str] = []
    if order is None:
        notes.append("no prompt order for character 100001 or 100000: every prompt is used in array order")
        for identifier, listed in by_id.items():
            nodes.append(
                _node_from_prompt(listed, identifier, fields.enabled_flag(listed.get("enabled")), findings)
            )
        return Converted(
            nodes=tuple(nodes), not_in_order=0, warnings=tuple(findings.sentences()), notes=tuple(notes)
        )

    notes.append(f"prompt order of character {character} used")
    placed: set[str] = set()
    for position, entry in enumerate(order, start=1):
        parsed = _order_entry(entry)
        if parsed is None:
            findings.add("Prompt order entries without an identifier, skipped", f"#{position}")
            continue
        identifier, enabled = parsed
        if identifier in placed:
            findings.add("Identifiers listed twice in the prompt order, first one kept", identifier)
            continue
        prompt = by_id.get(identifier)
        if prompt is None:
            findings.add("Prompt order entries naming no prompt, skipped", identifier)
            continue
        placed.add(identifier)
        nodes.append(_node_from_prompt(prompt, identifier, enabled, findings))
    not_in_order = sum(1 for identifier in by_id if identifier not in placed)
    return Converted(
        nodes=tuple(nodes),
        not_in_order=not_in_order,
        warnings=tuple(findings.sentences()),
        notes=tuple(notes),
    )


def parse_pre_prompt_manager(data: dict[str, Any]) -> Converted:
    """An old chat preset (main/nsfw/jailbreak prompts) in SillyTavern's default order
    (docs/import.md#recognised-shapes, shape 2)."""
    findings = Findings()
    nodes = []
    for identifier, key in PRE_PM_ORDER:
        if key is None:
            nodes.append(synthetic_node(identifier, kind="marker"))
            continue
        content, ok = fields.text_field(data.get(key))
        if not ok:
            findings.add("Content that is not text, treated as empty", key)
        nodes.append(synthetic_node(identifier, content=content))
    warnings = [
        "This preset was converted from an old preset format (before the Prompt Manager).",
        *findings.sentences(),
    ]
    return Converted(
        nodes=tuple(nodes),
        not_in_order=0,
        warnings=tuple(warnings),
        notes=("converted from an old preset format",),
    )
