"""Sampler settings in, one provider's request parameters out: what is sent, what is not and why.

Every setting that is set ends up in exactly one place: `params` (maybe clamped to the provider's
range, with a sentence in `adjusted`) or `dropped` (with the reason).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from ..vocabulary import PROVIDERS
from .rules import (
    ANTHROPIC_BUDGET_SHARES,
    ANTHROPIC_MIN_BUDGET,
    GEMINI_BUDGETS,
    OPENAI_EFFORTS,
    PROVIDER_LABELS,
    PROVIDER_NAMES,
    RULES,
    Rule,
)
from .settings import REASONING_EFFORTS, SETTING_NAMES, SamplerSettings, is_number

ANTHROPIC_THINKING_TOP_P = 0.95


@dataclass(frozen=True, slots=True)
class Dropped:
    """A setting that is not sent, and the reason in a few words."""

    name: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class GenerationSettings:
    """The request parameters for one provider (`params` by the provider's names; for Gemini the
    contents of `generationConfig`), what was dropped, and sentences for values changed to fit."""

    provider: str
    params: Mapping[str, Any]
    dropped: tuple[Dropped, ...] = ()
    adjusted: tuple[str, ...] = ()
    sent: tuple[str, ...] = ()  # the SillyTavern names of the settings in `params`

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of the assemble API and CLI: `{"params": {…}, "dropped": [{name, reason}]}`."""
        return {"params": copy.deepcopy(dict(self.params)), "dropped": [d.to_dict() for d in self.dropped]}


def generation_settings(settings: SamplerSettings, provider: str) -> GenerationSettings:
    """The provider's request parameters for these settings; raises ValueError for an unknown provider.

    Kept per (settings, provider): every assemble request asks, and few servers change them."""
    try:
        return _kept_generation_settings(settings, provider)
    except TypeError:  # a value the file wrote as a list or an object: not hashable, made each time
        return _generation_settings(settings, provider)


def _generation_settings(settings: SamplerSettings, provider: str) -> GenerationSettings:
    if provider not in PROVIDERS:
        raise ValueError(f"Unknown provider {provider!r}: use openai, anthropic or gemini.")
    label = PROVIDER_LABELS[provider]
    values = settings.to_dict()
    params: dict[str, Any] = {}
    dropped: list[Dropped] = []
    adjusted: list[str] = []
    names_sent: list[str] = []
    for name in SETTING_NAMES:
        if name not in values or name == "reasoning_effort":
            continue
        rule = RULES[provider][name]
        if rule.param is None:
            dropped.append(Dropped(name, f"{label} has no {name} parameter"))
            continue
        sent, reason, note = _number(name, values[name], rule, PROVIDER_NAMES[provider])
        if reason is not None:
            dropped.append(Dropped(name, reason))
        else:
            params[rule.param] = sent
            names_sent.append(name)
        if note is not None:
            adjusted.append(note)
    if "reasoning_effort" in values:
        _reasoning(provider, values["reasoning_effort"], params, dropped, adjusted)
    gone = {d.name for d in dropped}
    names_sent = [n for n in names_sent if n not in gone]
    if "reasoning_effort" in values and "reasoning_effort" not in gone:
        names_sent.append("reasoning_effort")
    return GenerationSettings(
        provider=provider,
        params=MappingProxyType(params),  # shared by every request with these settings: read-only
        dropped=tuple(dropped),
        adjusted=tuple(adjusted),
        sent=tuple(names_sent),
    )


_kept_generation_settings = lru_cache(maxsize=1024)(_generation_settings)


def with_generation_settings(
    provider: str, payload: dict[str, Any], generation: GenerationSettings
) -> dict[str, Any]:
    """The request body with the parameters in place: top-level fields for OpenAI and Anthropic,
    `generationConfig` for Gemini (left out when there is nothing to send)."""
    params = copy.deepcopy(dict(generation.params))
    if not params:
        return payload
    if provider == "gemini":
        return {**payload, "generationConfig": params}
    return {**payload, **params}


def _number(name: str, value: Any, rule: Rule, provider_name: str) -> tuple[Any, str | None, str | None]:
    """(value to send, reason it is dropped, sentence saying how it was changed)."""
    if not is_number(value):
        return None, f"{value!r} is not a number", None
    if rule.omit is not None and (value == rule.omit or (rule.omit_below and value < rule.omit)):
        return None, rule.omit_reason, None
    sent: float | int = value
    note = None
    if rule.low is not None and sent < rule.low:
        sent, note = (
            rule.low,
            f"{name} {value:g} is below {provider_name}'s minimum of {rule.low:g}, so {rule.low:g} is sent.",
        )
    elif rule.high is not None and sent > rule.high:
        sent, note = (
            rule.high,
            f"{name} {value:g} is above {provider_name}'s maximum of {rule.high:g}, so {rule.high:g} is sent.",
        )
    if rule.whole:
        whole = round(sent)
        if whole != sent and note is None:
            note = f"{name} {value:g} is not a whole number, so {whole} is sent."
        sent = whole
    return sent, None, note


def _reasoning(
    provider: str, effort: Any, params: dict[str, Any], dropped: list[Dropped], adjusted: list[str]
) -> None:
    if effort not in REASONING_EFFORTS:
        dropped.append(
            Dropped(
                "reasoning_effort",
                f"{effort!r} is not one of SillyTavern's efforts ({', '.join(REASONING_EFFORTS)})",
            )
        )
        return
    if effort == "auto":
        dropped.append(
            Dropped("reasoning_effort", "auto leaves reasoning to the model's default, so nothing is sent")
        )
        return
    if provider == "openai":
        params["reasoning_effort"] = OPENAI_EFFORTS[effort]
        if OPENAI_EFFORTS[effort] != effort:
            adjusted.append(f"reasoning_effort {effort} is sent as OpenAI's {OPENAI_EFFORTS[effort]!r}.")
    elif provider == "gemini":
        params["thinkingConfig"] = {"thinkingBudget": GEMINI_BUDGETS[effort]}
    else:
        _anthropic_thinking(effort, params, dropped, adjusted)


def _anthropic_thinking(
    effort: str, params: dict[str, Any], dropped: list[Dropped], adjusted: list[str]
) -> None:
    """Extended thinking takes a budget below max_tokens, and then refuses temperature and top_k changes
    and top_p below 0.95."""
    max_tokens = params.get("max_tokens")
    if max_tokens is None:
        dropped.append(
            Dropped(
                "reasoning_effort",
                "Anthropic's thinking budget must be below max_tokens, and no max tokens is set",
            )
        )
        return
    if max_tokens <= ANTHROPIC_MIN_BUDGET:
        dropped.append(
            Dropped(
                "reasoning_effort",
                f"Anthropic's thinking budget is at least {ANTHROPIC_MIN_BUDGET} tokens and must be below "
                f"max_tokens ({max_tokens})",
            )
        )
        return
    budget = max(ANTHROPIC_MIN_BUDGET, int(max_tokens * ANTHROPIC_BUDGET_SHARES[effort]))
    params["thinking"] = {"type": "enabled", "budget_tokens": min(budget, max_tokens - 1)}
    for name in ("temperature", "top_k"):
        if name in params:
            del params[name]
            dropped.append(
                Dropped(
                    name, f"Anthropic's extended thinking (reasoning_effort {effort}) does not accept {name}"
                )
            )
    top_p = params.get("top_p")
    if top_p is not None and top_p < ANTHROPIC_THINKING_TOP_P:
        params["top_p"] = ANTHROPIC_THINKING_TOP_P
        adjusted.append(
            f"top_p {top_p:g} is below the {ANTHROPIC_THINKING_TOP_P} Anthropic's extended thinking allows, "
            f"so {ANTHROPIC_THINKING_TOP_P} is sent."
        )
