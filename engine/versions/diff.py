"""What changed between two versions of a preset: nodes added, removed, moved, changed (with a
word-level diff of their text), toggled, and settings changed. Nodes are matched by identifier."""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from engine.st_format import PresetNode

# Fields a node edit can change; `enabled` is a toggle and the position a move, reported apart.
NODE_FIELDS = (
    "name",
    "kind",
    "role",
    "content",
    "injection_position",
    "injection_depth",
    "injection_order",
    "injection_trigger",
    "forbid_overrides",
    "prefix",
    "suffix",
)
# Past this many words a side, the text diff compares lines instead (SequenceMatcher is quadratic).
WORD_DIFF_LIMIT = 20_000

# A word with the whitespace after it (leading whitespace alone): a changed run of words reads as
# one deletion and one insertion, not word-by-word alternation.
_WORDS = re.compile(r"\S+\s*|\s+")


@dataclass(frozen=True, slots=True)
class TextOp:
    """One run of a text diff: `op` is "equal", "insert" or "delete"."""

    op: str
    text: str


@dataclass(frozen=True, slots=True)
class NodeChange:
    """A node present on both sides whose fields differ; `text` diffs its content word by word."""

    identifier: str
    name: str
    fields: tuple[str, ...]
    before: dict[str, Any]
    after: dict[str, Any]
    text: tuple[TextOp, ...] = ()


@dataclass(frozen=True, slots=True)
class VersionDiff:
    """The difference from one node list to another (identifiers in the order of the later one)."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    moved: tuple[str, ...]
    changed: tuple[str, ...]
    toggled: tuple[str, ...]
    settings: tuple[str, ...]
    changes: tuple[NodeChange, ...] = ()
    names: Mapping[str, str] = field(default_factory=dict)
    enabled_after: Mapping[str, bool] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.moved or self.changed or self.toggled or self.settings)

    def to_dict(self) -> dict[str, list[str]]:
        """The command line's shape: identifiers per category, setting names."""
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "moved": list(self.moved),
            "changed": list(self.changed),
            "toggled": list(self.toggled),
            "settings": list(self.settings),
        }


def diff_versions(
    before: Sequence[PresetNode],
    after: Sequence[PresetNode],
    *,
    settings_before: Mapping[str, Any] | None = None,
    settings_after: Mapping[str, Any] | None = None,
) -> VersionDiff:
    """Compare two node lists (and their settings)."""
    old = {node.identifier: node for node in before}
    new = {node.identifier: node for node in after}
    added = tuple(node.identifier for node in after if node.identifier not in old)
    removed = tuple(node.identifier for node in before if node.identifier not in new)
    moved = _moved(
        [node.identifier for node in before if node.identifier in new],
        [node.identifier for node in after if node.identifier in old],
    )
    changes = tuple(
        change
        for node in after
        if node.identifier in old and (change := _node_change(old[node.identifier], node)) is not None
    )
    toggled = tuple(
        node.identifier
        for node in after
        if node.identifier in old and node.switchable and old[node.identifier].enabled != node.enabled
    )
    settings_before, settings_after = settings_before or {}, settings_after or {}
    settings = tuple(
        sorted(
            key
            for key in set(settings_before) | set(settings_after)
            if settings_before.get(key) != settings_after.get(key)
        )
    )
    names = {node.identifier: node.name or node.identifier for node in (*before, *after)}
    return VersionDiff(
        added=added,
        removed=removed,
        moved=moved,
        changed=tuple(change.identifier for change in changes),
        toggled=toggled,
        settings=settings,
        changes=changes,
        names=names,
        enabled_after={node.identifier: node.enabled for node in after},
    )


def _moved(before: list[str], after: list[str]) -> tuple[str, ...]:
    """The fewest common nodes whose moving explains the new order: those outside the longest run
    that kept its relative order (a longest increasing subsequence of old positions)."""
    index = {identifier: position for position, identifier in enumerate(before)}
    sequence = [index[identifier] for identifier in after]
    tails: list[int] = []  # tails[k]: smallest old position ending an increasing run of length k+1
    tail_at: list[int] = []  # index into `sequence` of that tail
    parent = [-1] * len(sequence)
    for i, value in enumerate(sequence):
        k = bisect.bisect_left(tails, value)
        if k == len(tails):
            tails.append(value)
            tail_at.append(i)
        else:
            tails[k] = value
            tail_at[k] = i
        parent[i] = tail_at[k - 1] if k else -1
    kept: set[int] = set()
    i = tail_at[-1] if tail_at else -1
    while i >= 0:
        kept.add(i)
        i = parent[i]
    return tuple(identifier for i, identifier in enumerate(after) if i not in kept)


def _node_change(old: PresetNode, new: PresetNode) -> NodeChange | None:
    changed = tuple(name for name in NODE_FIELDS if getattr(old, name) != getattr(new, name))
    if not changed:
        return None
    return NodeChange(
        identifier=new.identifier,
        name=new.name or new.identifier,
        fields=changed,
        before={name: _plain(getattr(old, name)) for name in changed if name != "content"},
        after={name: _plain(getattr(new, name)) for name in changed if name != "content"},
        text=word_diff(old.content, new.content) if "content" in changed else (),
    )


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def word_diff(before: str, after: str) -> tuple[TextOp, ...]:
    """Runs of equal, deleted and inserted text, word by word (whitespace kept with its words)."""
    a, b = _WORDS.findall(before), _WORDS.findall(after)
    if max(len(a), len(b)) > WORD_DIFF_LIMIT:
        a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    ops: list[TextOp] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            _append(ops, "equal", "".join(a[i1:i2]))
            continue
        if tag in ("delete", "replace"):
            _append(ops, "delete", "".join(a[i1:i2]))
        if tag in ("insert", "replace"):
            _append(ops, "insert", "".join(b[j1:j2]))
    return tuple(ops)


def _append(ops: list[TextOp], op: str, text: str) -> None:
    if not text:
        return
    if ops and ops[-1].op == op:
        ops[-1] = TextOp(op, ops[-1].text + text)
    else:
        ops.append(TextOp(op, text))
