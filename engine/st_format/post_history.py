"""docs/import.md#post-history-instructions: post-history instructions of every shape become depth-0 system
nodes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.st_format.model import PresetNode
from engine.st_format.prompt_manager import synthetic_node

POST_HISTORY_ORDER = 10000  # after everything else at depth 0

_SOURCES: tuple[tuple[str, str, Callable[[dict[str, Any]], Any]], ...] = (
    ("post_history", "Post-History Instructions", lambda d: d.get("post_history")),
    ("sysprompt_post_history", "Post-History Instructions (system prompt)", lambda d: _inner(d, "sysprompt")),
    ("context_post_history", "Post-History Instructions (context)", lambda d: _inner(d, "context")),
)


def _inner(data: dict[str, Any], key: str) -> Any:
    section = data.get(key)
    return section.get("post_history") if isinstance(section, dict) else None


def post_history_nodes(
    data: dict[str, Any], existing: Sequence[PresetNode], clean: Callable[[str], str] = lambda t: t
) -> tuple[PresetNode, ...]:
    """The post-history nodes to append, skipping one equal to an earlier candidate or depth node."""
    seen = {n.content.strip() for n in existing if n.is_depth_injection}
    out = []
    for identifier, name, read in _SOURCES:
        value = read(data)
        if not isinstance(value, str):
            continue
        text = clean(value).strip()
        if not text or text in seen:
            continue
        seen.add(text)
        out.append(
            synthetic_node(
                identifier,
                name=name,
                content=text,
                injection_position=1,
                injection_depth=0,
                injection_order=POST_HISTORY_ORDER,
            )
        )
    return tuple(out)
