"""Per-server World Info settings (docs/worldinfo.md#books-and-settings); the defaults are SillyTavern's
shipped ones."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

STRATEGIES = ("character_first", "global_first", "evenly")
DEFAULT_CONTEXT_SIZE = 16_384


@dataclass(frozen=True, slots=True)
class WorldInfoSettings:
    """How entries are scanned, budgeted and ordered for one server."""

    scan_depth: int = 2
    budget_percent: int = 25
    budget_cap: int = 0  # tokens; 0 = no cap
    recursive: bool = True
    max_recursion: int = 0  # passes; 0 = unlimited
    min_activations: int = 0
    min_activations_depth_max: int = 0
    case_sensitive: bool = False
    match_whole_words: bool = True
    group_scoring: bool = False
    include_names: bool = True
    strategy: str = "character_first"
    context_size: int = DEFAULT_CONTEXT_SIZE

    def budget_tokens(self, context: int | None = None) -> int:
        """The World Info token budget for a context of `context` tokens (else the setting's size)."""
        size = context if context is not None and context > 0 else self.context_size
        budget = max(1, round(self.budget_percent * size / 100))
        if self.budget_cap > 0:
            budget = min(budget, self.budget_cap)
        return budget

    def to_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (cache and JSON)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> WorldInfoSettings:
        """Settings from a dict; missing or unknown keys take the defaults."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (d or {}).items() if k in names})
