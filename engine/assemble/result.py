"""What an assembly returns (docs/assembly.md#output-cli-api), and the stored memory it may be given."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from ..buckets import Budget, StmLine
from ..parts import Message, MessageJson, Omission, OmissionJson
from ..sampling import GenerationSettings
from ..tokens import TokenReport, TokenReportJson


@dataclass(frozen=True, slots=True)
class StoredStm:
    """Short-term memory computed from storage (it replaces the document's inline STM)."""

    lines: tuple[StmLine, ...]
    tail_directive: str | None = None


class BudgetJson(TypedDict):
    context: int
    reply: int


class AssemblyJson(TypedDict):
    """The assemble answer (docs/bot.md), as `Assembly.to_dict` writes it; the keys marked
    NotRequired are there only when the assembly has them."""

    mode: str
    preset: str | None
    style: str
    messages: list[MessageJson]
    warnings: list[str]
    omitted: list[OmissionJson]
    variables: dict[str, Any]
    global_variables: dict[str, Any]
    seed: int
    tokens: TokenReportJson
    budget: NotRequired[BudgetJson]
    provider: NotRequired[str]
    provider_payload: NotRequired[dict[str, Any] | None]
    generation_settings: NotRequired[dict[str, Any]]
    world_info: NotRequired[dict[str, Any]]
    sillytavern_differences: NotRequired[list[str]]


# Made once per assembly, so not frozen (a frozen dataclass sets each of its 18 fields through
# object.__setattr__, a few percent of the smallest assembly): treat it as a value all the same.
@dataclass(slots=True)
class Assembly:
    """Everything one assembly produced (docs/assembly.md#output-cli-api)."""

    mode: str  # "native" | "preset"
    preset_name: str | None
    style: str
    messages: tuple[Message, ...]
    warnings: tuple[str, ...]
    omitted: tuple[Omission, ...]
    variables: dict[str, Any]
    global_variables: dict[str, Any]
    seed: int
    tokens: TokenReport
    provider: str | None = None
    provider_payload: dict[str, Any] | None = None
    budget: Budget | None = None
    unknown_macros: tuple[str, ...] = ()
    generation: GenerationSettings | None = None  # the sampler parameters for the provider
    extra: dict[str, Any] = field(default_factory=dict)
    # when the server's World Info took part (docs/worldinfo.md#the-explanation)
    world_info: dict[str, Any] | None = None
    # where SillyTavern 1.18 would send otherwise, and why (docs/fidelity.md#the-deliberate-differences)
    differences: tuple[str, ...] = ()

    def to_dict(self) -> AssemblyJson:
        """The JSON shape shared by the CLI and the API."""
        out: AssemblyJson = {
            "mode": self.mode,
            "preset": self.preset_name,
            "style": self.style,
            "messages": [m.to_dict() for m in self.messages],
            "warnings": list(self.warnings),
            "omitted": [o.to_dict() for o in self.omitted],
            "variables": self.variables,
            "global_variables": self.global_variables,
            "seed": self.seed,
            "tokens": self.tokens.to_dict(),
        }
        if self.budget is not None:
            out["budget"] = {"context": self.budget.context, "reply": self.budget.reply}
        if self.provider is not None:
            out["provider"] = self.provider
            out["provider_payload"] = self.provider_payload
        if self.generation is not None:
            out["generation_settings"] = self.generation.to_dict()
        if self.world_info is not None:
            out["world_info"] = self.world_info
        if self.differences:
            out["sillytavern_differences"] = list(self.differences)
        return out
