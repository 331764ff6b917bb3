"""The admin's words for what the code calls by internal names: tokenizers, the server's blocks in
an omission or warning sentence, audit actions and details. The exact name stays in a tooltip."""

from __future__ import annotations

import re
from typing import Any

from django import template

register = template.Library()

TOKENIZERS = {
    "o200k_base": "OpenAI's current tokenizer (GPT-4o and later)",
    "cl100k_base": "OpenAI's older tokenizer (GPT-4, GPT-3.5)",
}

# A block tag in parentheses at the end of a phrase: "The server's system prompt (SYSTEM_HUMANIZER_RULES)."
_TAG_IN_PARENS = re.compile(r"\s*\((?:[A-Z][A-Z0-9]*_)+[A-Z0-9]+\)")


@register.filter
def tokenizer_words(encoding: str) -> str:
    return TOKENIZERS.get(encoding, encoding)


@register.filter
def without_tags(sentence: Any) -> str:
    """The sentence without the internal block tags it names in parentheses (kept in its title)."""
    return _TAG_IN_PARENS.sub("", str(sentence))
