"""Token counts (docs/assembly.md#tokens): exact and offline for OpenAI encodings, cached by text hash.

OpenAI's published chat rule: each message costs its content's tokens + 3, and the reply priming
costs 3 more. `bpe_openai` ships its rank tables, so counting never touches the network. For
Anthropic and Gemini no registry package ships their tokenizer's tables (one that did would be
added here): their counts are an estimate made with the server's OpenAI encoding over the
provider-shaped messages, labelled `exact: false` (documented in docs/assembly.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, TypedDict

from engine.bounded import ENTRY_OVERHEAD, BoundedCache

ENCODINGS = ("o200k_base", "cl100k_base")
DEFAULT_ENCODING = "o200k_base"
PER_MESSAGE = 3
REPLY_PRIMING = 3
# Keyed by a 16-byte digest of the text, so each entry costs the same few bytes whatever the text's size.
_counts: BoundedCache[tuple[str, bytes], int] = BoundedCache(
    max_entries=20_000, max_bytes=20_000 * ENTRY_OVERHEAD
)


@cache
def _encoder(name: str) -> Any:
    # its tables take a second to load: only when a count is first asked for
    return _bpe_openai().get_encoding(name)


def _bpe_openai() -> Any:
    """The `bpe_openai` package, imported without reading the rank tables of the encodings we never
    use. At import it builds its model registry by calling every encoding's constructor, and each
    reads its whole rank table (cl100k, o200k and voyage3: about 450 000 base64 lines) only for the
    special tokens the registry keeps. Here the package's `registry` module is loaded first, its
    table reader answers empty tables while the package's own import runs, and the constructors'
    memos are then cleared, so an encoding's table is read when that encoding is first asked for.
    Should the package's layout change, it is imported as it is."""
    import importlib.util
    import sys

    if "bpe_openai" in sys.modules:
        return sys.modules["bpe_openai"]
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or spec.loader is None:
        import bpe_openai

        return bpe_openai
    package = importlib.util.module_from_spec(spec)
    sys.modules["bpe_openai"] = package
    try:
        registry = importlib.import_module("bpe_openai.registry")
        real = registry._load_mergeable_ranks
        constructors = list(registry.ENCODING_CONSTRUCTORS.values())
        registry._load_mergeable_ranks = lambda stem: {}  # type: ignore[attr-defined]
        try:
            spec.loader.exec_module(package)
        finally:
            registry._load_mergeable_ranks = real  # type: ignore[attr-defined]
            for constructor in constructors:
                constructor.cache_clear()
    except Exception:
        for loaded in [name for name in sys.modules if name.split(".")[0] == "bpe_openai"]:
            del sys.modules[loaded]
        import bpe_openai

        return bpe_openai
    return package


def load_tables(encoding: str = DEFAULT_ENCODING) -> None:
    """Load the encoding's rank tables now (about 1.5 s) rather than on the first count."""
    _encoder(encoding)


def count_text(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """The exact number of tokens of `text` in the OpenAI encoding (special tokens count as text)."""
    if not text:
        return 0
    key = (encoding, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
    found = _counts.get(key)
    if found is not None:
        return found
    count = len(_encoder(encoding).encode_ordinary(text))
    _counts.put(key, count, ENTRY_OVERHEAD)
    return count


EXACT_PROVIDERS = frozenset({"openai"})  # providers whose own tokenizer ships offline


def is_exact(provider: str | None) -> bool:
    """True when counts for `provider` are exact (None: the neutral shape, counted as OpenAI's)."""
    return provider is None or provider in EXACT_PROVIDERS


class TokenReportJson(TypedDict):
    total: int
    per_message: list[int]
    encoding: str
    exact: bool
    provider: str | None


@dataclass(slots=True)  # one per assembly: not frozen, as engine.parts explains; a value all the same
class TokenReport:
    encoding: str
    exact: bool  # False for providers whose tokenizer we can only estimate
    per_message: tuple[int, ...]  # per neutral message: content tokens + 3
    total: int  # the provider-shaped request, with the reply priming
    provider: str | None = None  # the provider the counts are for (None: neutral, as OpenAI)

    def to_dict(self) -> TokenReportJson:
        return {
            "total": self.total,
            "per_message": list(self.per_message),
            "encoding": self.encoding,
            "exact": self.exact,
            "provider": self.provider,
        }


def message_tokens(content: str, encoding: str = DEFAULT_ENCODING) -> int:
    """One chat message's cost: its content's tokens plus the per-message overhead."""
    return count_text(content, encoding) + PER_MESSAGE


def count_messages(contents: Sequence[str], encoding: str = DEFAULT_ENCODING) -> int:
    """A whole chat request: every message's cost plus the reply priming."""
    return sum(message_tokens(text, encoding) for text in contents) + REPLY_PRIMING
