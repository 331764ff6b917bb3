"""docs/import.md#the-import-summary: the counts and sentences shown after an import, recomputable after nodes
are toggled."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from engine.macros import KNOWN_MACROS, find_unsupported_macros  # the engine owns the names
from engine.st_format.model import ImportSummary, PresetNode
from engine.st_format.wording import short_list

# Markers whose disabling hides one of the server's own blocks, and what that block is called here.
HIDING_MARKERS = {
    "charDescription": "persona prompt",
    "charPersonality": "personality",
    "dialogueExamples": "sample dialogues",
}
WORLD_INFO_MARKERS = ("worldInfoBefore", "worldInfoAfter")

# The opening of the warning about HTML in enabled nodes; the summary page lists those nodes in full
# and leaves this warning out, so it is said once.
HTML_WARNING = "Enabled nodes contain HTML tags, which Discord shows as plain text"

# Real HTML element names only: prompt authors use XML-ish tags (<rules>, <task>) as structure for the
# model, which is fine; HTML elements are what ends up shown as raw text in Discord.
_HTML_TAG = re.compile(
    r"</?(?:a|abbr|audio|b|big|blockquote|br|button|caption|center|code|col|del|details|div|dl|dd|dt"
    r"|em|figure|figcaption|font|footer|h[1-6]|header|hr|i|iframe|img|input|ins|label|li|mark|nav|ol|p"
    r"|pre|q|ruby|rt|section|small|span|strong|style|sub|summary|sup|svg|table|tbody|td|th|thead|tr|u|ul"
    r"|video)(?:\s[^<>]*+)?/?\s*+>",
    re.IGNORECASE,
)


def has_html(text: str) -> bool:
    """True when `text` contains an HTML element tag."""
    return "<" in text and _HTML_TAG.search(text) is not None


def _rendered_text(node: PresetNode) -> str:
    """The preset-authored text a node contributes when enabled: content, or a marker's prefix/suffix."""
    if node.kind == "content":
        return node.content
    if node.kind == "marker":
        return node.prefix + node.suffix
    return ""


# Every name the macro parser could report follows an opening brace run (it reads `[^\s:{}]+` after
# the braces and leading spaces); this finds a superset of them cheaply, so texts whose macros are all
# known skip the full parse.
# Anchored at the first brace of a run and possessive, so a long run of braces is scanned once.
_MACRO_HEAD = re.compile(r"(?<!\{)\{++\s*+([^\s:{}]++)")


def _may_use_unknown_macros(text: str) -> bool:
    return any(
        not name.startswith("//") and name.lower() not in KNOWN_MACROS for name in _MACRO_HEAD.findall(text)
    )


def unsupported_macros(nodes: Iterable[PresetNode]) -> tuple[str, ...]:
    """Names of macros the engine does not know, used by enabled nodes, in first-use order."""
    names: dict[str, None] = {}
    for node in nodes:
        text = _rendered_text(node)
        if node.enabled and "{" in text and _may_use_unknown_macros(text):
            for name in sorted(find_unsupported_macros(text)):
                names.setdefault(name, None)
    return tuple(names)


def hidden_blocks(nodes: Sequence[PresetNode]) -> tuple[str, ...]:
    """The server blocks the preset hides with disabled markers, as `block: marker is disabled`."""
    markers = {n.identifier: n for n in nodes if n.kind == "marker"}
    hidden = [
        f"{label}: {identifier} is disabled"
        for identifier, label in HIDING_MARKERS.items()
        if identifier in markers and not markers[identifier].enabled
    ]
    world = [markers[i] for i in WORLD_INFO_MARKERS if i in markers]
    if world and not any(n.enabled for n in world):
        names = " and ".join(n.identifier for n in world)
        hidden.append(f"documents: {names} {'is' if len(world) == 1 else 'are'} disabled")
    return tuple(hidden)


def node_warnings(nodes: Sequence[PresetNode]) -> tuple[str, ...]:
    """The warnings that concern `nodes` themselves (unsupported macros, HTML, other generation
    types), without those about the preset as a whole (its Chat History node): what an edited node
    is told, since one node alone is not the preset (docs/editor.md)."""
    macros = unsupported_macros(nodes)
    html = tuple(n.name for n in nodes if n.enabled and has_html(_rendered_text(n)))
    return tuple(_node_warnings(nodes, macros, html))


def _node_warnings(nodes: Sequence[PresetNode], macros: Sequence[str], html: Sequence[str]) -> list[str]:
    warnings = []
    if macros:
        warnings.append(
            f"Enabled nodes use macros that are not supported and stay as written: {short_list(macros)}."
        )
    if html:
        warnings.append(f"{HTML_WARNING}: {short_list(html)}.")
    other_types = [
        n.name
        for n in nodes
        if n.enabled and n.kind != "comment" and n.injection_trigger and "normal" not in n.injection_trigger
    ]
    if other_types:
        warnings.append(
            "Enabled nodes that run only for other generation types (continue, impersonate, swipe, "
            f"regenerate or quiet) are left out of normal replies: {short_list(other_types)}."
        )
    return warnings


def _derived_warnings(nodes: Sequence[PresetNode], macros: Sequence[str], html: Sequence[str]) -> list[str]:
    warnings = _node_warnings(nodes, macros, html)
    history = [n for n in nodes if n.identifier == "chatHistory" and n.kind == "marker"]
    if history and not any(n.enabled for n in history):
        warnings.append(
            "The Chat History node is switched off: as in SillyTavern 1.18, the bot sends no conversation "
            "with this preset until it is switched on."
        )
    elif nodes and not history:
        warnings.append(
            "The preset has no Chat History node: as in SillyTavern 1.18, the bot sends no conversation "
            "with it."
        )
    return warnings


def summarize(
    nodes: Sequence[PresetNode],
    *,
    shape: str,
    not_in_order: int = 0,
    import_warnings: Sequence[str] = (),
    notes: Sequence[str] = (),
    secrets_blanked: Sequence[str] = (),
    kept_not_applied: Sequence[str] = (),
    sampler_settings: Sequence[str] = (),
) -> ImportSummary:
    """The full summary for `nodes` in their current state, plus what the import itself found."""
    macros = unsupported_macros(nodes)
    html = tuple(n.name for n in nodes if n.enabled and has_html(_rendered_text(n)))
    derived = _derived_warnings(nodes, macros, html)
    return ImportSummary(
        shape=shape,
        nodes=len(nodes),
        markers=sum(n.kind == "marker" for n in nodes),
        content=sum(n.kind == "content" for n in nodes),
        comments=sum(n.kind == "comment" for n in nodes),
        toggleable=sum(n.toggleable for n in nodes),
        enabled=sum(n.toggleable and n.enabled for n in nodes),
        depth_injections=sum(n.is_depth_injection for n in nodes),
        not_in_order=not_in_order,
        hidden_blocks=hidden_blocks(nodes),
        unsupported_macros=macros,
        html_nodes=html,
        kept_not_applied=tuple(kept_not_applied),
        sampler_settings=tuple(sampler_settings),
        secrets_blanked=tuple(secrets_blanked),
        warnings=(*import_warnings, *derived),
        notes=tuple(notes),
        import_warnings=tuple(import_warnings),
    )


def resummarize(summary: ImportSummary, nodes: Sequence[PresetNode]) -> ImportSummary:
    """`summary` recounted for `nodes` (e.g. after toggling), keeping what the import found in the file."""
    return summarize(
        nodes,
        shape=summary.shape,
        not_in_order=summary.not_in_order,
        import_warnings=summary.import_warnings,
        notes=summary.notes,
        secrets_blanked=summary.secrets_blanked,
        kept_not_applied=summary.kept_not_applied,
        sampler_settings=summary.sampler_settings,
    )
