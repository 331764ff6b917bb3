"""What each provider's API accepts for each SillyTavern sampler setting (docs/sampling.md, with sources).

Data only: `mapping.py` applies it. A rule names the provider's parameter, the kind of number it
takes, the range the provider documents (values outside are clamped, with a warning), and the value
that means "nothing to send" (SillyTavern's off value, or the provider's own default).
"""

from __future__ import annotations

from dataclasses import dataclass

PROVIDER_NAMES = {"openai": "OpenAI", "anthropic": "Anthropic", "gemini": "Gemini"}
PROVIDER_LABELS = {
    "openai": "OpenAI chat completions",
    "anthropic": "Anthropic messages",
    "gemini": "Gemini generationConfig",
}

OPENAI_REFERENCE = "https://platform.openai.com/docs/api-reference/chat/create"
ANTHROPIC_REFERENCE = "https://docs.anthropic.com/en/api/messages"
GEMINI_REFERENCE = "https://ai.google.dev/api/generate-content#generationconfig"

INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Rule:
    """How one setting is sent to one provider; `param` None means the provider has no such parameter."""

    param: str | None
    whole: bool = False  # the provider takes an integer
    low: float | None = None
    high: float | None = None
    omit: float | None = None  # this value sends nothing
    omit_below: bool = False  # and so does any value below it
    omit_reason: str = ""
    source: str = ""


def _absent(provider: str) -> Rule:
    return Rule(param=None, source=_REFERENCE[provider])


_REFERENCE = {"openai": OPENAI_REFERENCE, "anthropic": ANTHROPIC_REFERENCE, "gemini": GEMINI_REFERENCE}
_TOP_K_OFF = "0 (or less) switches top-k off in SillyTavern, so nothing is sent"
_NO_REPLY = "0 (or less) asks for no reply at all, so nothing is sent and the provider's limit applies"
_SEED_OFF = "-1 (or any negative seed) means a random seed in SillyTavern, so nothing is sent"

# reasoning_effort is not a number and maps differently per provider: see mapping.py.
RULES: dict[str, dict[str, Rule]] = {
    "openai": {
        "temperature": Rule("temperature", low=0, high=2, source=OPENAI_REFERENCE),
        "top_p": Rule("top_p", low=0, high=1, source=OPENAI_REFERENCE),
        "top_k": _absent("openai"),
        "min_p": _absent("openai"),
        "frequency_penalty": Rule("frequency_penalty", low=-2, high=2, source=OPENAI_REFERENCE),
        "presence_penalty": Rule("presence_penalty", low=-2, high=2, source=OPENAI_REFERENCE),
        "repetition_penalty": _absent("openai"),
        "top_a": _absent("openai"),
        "openai_max_tokens": Rule(
            "max_completion_tokens",
            whole=True,
            low=1,
            omit=0,
            omit_below=True,
            omit_reason=_NO_REPLY,
            source=OPENAI_REFERENCE,
        ),
        "seed": Rule(
            "seed",
            whole=True,
            low=0,
            omit=-1,
            omit_below=True,
            omit_reason=_SEED_OFF,
            source=OPENAI_REFERENCE,
        ),
    },
    "anthropic": {
        "temperature": Rule("temperature", low=0, high=1, source=ANTHROPIC_REFERENCE),
        "top_p": Rule(
            "top_p",
            low=0,
            high=1,
            omit=1,
            omit_reason="1 samples from every token, Anthropic's default, so nothing is sent "
            "(newer Claude models refuse temperature and top_p together)",
            source=ANTHROPIC_REFERENCE,
        ),
        "top_k": Rule(
            "top_k",
            whole=True,
            low=1,
            omit=0,
            omit_below=True,
            omit_reason=_TOP_K_OFF,
            source=ANTHROPIC_REFERENCE,
        ),
        "min_p": _absent("anthropic"),
        "frequency_penalty": _absent("anthropic"),
        "presence_penalty": _absent("anthropic"),
        "repetition_penalty": _absent("anthropic"),
        "top_a": _absent("anthropic"),
        "openai_max_tokens": Rule(
            "max_tokens",
            whole=True,
            low=1,
            omit=0,
            omit_below=True,
            omit_reason=_NO_REPLY,
            source=ANTHROPIC_REFERENCE,
        ),
        "seed": _absent("anthropic"),
    },
    "gemini": {
        "temperature": Rule("temperature", low=0, high=2, source=GEMINI_REFERENCE),
        "top_p": Rule("topP", low=0, high=1, source=GEMINI_REFERENCE),
        "top_k": Rule(
            "topK",
            whole=True,
            low=1,
            omit=0,
            omit_below=True,
            omit_reason=_TOP_K_OFF,
            source=GEMINI_REFERENCE,
        ),
        "min_p": _absent("gemini"),
        "frequency_penalty": Rule(
            "frequencyPenalty",
            low=-2,
            high=2,
            omit=0,
            omit_reason="0 is Gemini's default, and some Gemini models refuse any penalty, so nothing is sent",
            source=GEMINI_REFERENCE,
        ),
        "presence_penalty": Rule(
            "presencePenalty",
            low=-2,
            high=2,
            omit=0,
            omit_reason="0 is Gemini's default, and some Gemini models refuse any penalty, so nothing is sent",
            source=GEMINI_REFERENCE,
        ),
        "repetition_penalty": _absent("gemini"),
        "top_a": _absent("gemini"),
        "openai_max_tokens": Rule(
            "maxOutputTokens",
            whole=True,
            low=1,
            high=INT32_MAX,
            omit=0,
            omit_below=True,
            omit_reason=_NO_REPLY,
            source=GEMINI_REFERENCE,
        ),
        "seed": Rule(
            "seed",
            whole=True,
            low=0,
            high=INT32_MAX,
            omit=-1,
            omit_below=True,
            omit_reason=_SEED_OFF,
            source=GEMINI_REFERENCE,
        ),
    },
}

# reasoning_effort, per provider. OpenAI takes a word; SillyTavern's extra ends map to the nearest one.
OPENAI_EFFORTS = {"min": "minimal", "low": "low", "medium": "medium", "high": "high", "max": "high"}
# Anthropic takes a thinking budget in tokens: a share of max_tokens, at least the API's minimum and
# below max_tokens (the budget counts toward it).
ANTHROPIC_MIN_BUDGET = 1024
ANTHROPIC_BUDGET_SHARES = {"min": 0.0, "low": 0.1, "medium": 0.25, "high": 0.5, "max": 0.9}
# Gemini 2.5 takes a thinking budget in tokens; these fit every 2.5 model's documented range
# (Flash-Lite 512–24576, Flash 0–24576, Pro 128–32768).
GEMINI_BUDGETS = {"min": 512, "low": 1024, "medium": 8192, "high": 16384, "max": 24576}
