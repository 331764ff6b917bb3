"""Chat-template tokens that text-completion presets carry and a chat API must not see
(docs/import.md#story-strings)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# Each pattern is (label shown in the warning, regex); role headers go with their role word and line break.
_TOKEN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("<|im_start|>", re.compile(r"<\|im_start\|>[A-Za-z_]*[ \t]*\n?")),
    ("<|im_end|>", re.compile(r"<\|im_end\|>")),
    (
        "<|start_header_id|>…<|end_header_id|>",
        re.compile(r"<\|start_header_id\|>[^<]{0,200}<\|end_header_id\|>\n{0,2}"),
    ),
    ("<|eot_id|>", re.compile(r"<\|eot_id\|>")),
    ("<|begin_of_text|>", re.compile(r"<\|begin_of_text\|>")),
    ("<s>", re.compile(r"<s>")),
    ("</s>", re.compile(r"</s>")),
    ("[INST]", re.compile(r"\[INST\][ \t]?")),
    ("[/INST]", re.compile(r"[ \t]?\[/INST\]")),
    ("<start_of_turn>", re.compile(r"<start_of_turn>[A-Za-z_]*[ \t]*\n?")),
    ("<end_of_turn>", re.compile(r"<end_of_turn>\n?")),
)
_TOKENISH = re.compile(r"[<>\[\]|#]")


def instruct_sequences(instruct: Any) -> tuple[str, ...]:
    """The master export's own instruct sequences that look like template tokens, longest first.

    Plain-word sequences ("User:") are left alone: removing them would cut into the author's prose.
    """
    if not isinstance(instruct, dict):
        return ()
    found = set()
    for key, value in instruct.items():
        if not (key.endswith(("_sequence", "_suffix", "_prefix")) and isinstance(value, str)):
            continue
        token = value.strip()
        if token and _TOKENISH.search(token):
            found.add(token)
    return tuple(sorted(found, key=len, reverse=True))


class TokenStripper:
    """Removes chat-template tokens from text and remembers which ones it removed."""

    def __init__(self, extra_sequences: Iterable[str] = ()) -> None:
        self.extra = tuple(extra_sequences)
        self.removed: list[str] = []

    def _note(self, label: str) -> None:
        if label not in self.removed:
            self.removed.append(label)

    def strip(self, text: str) -> str:
        """`text` without chat-template tokens."""
        if not text:
            return text
        for sequence in self.extra:
            if sequence in text:
                text = text.replace(sequence, "")
                self._note(sequence.replace("\n", "\\n"))
        for label, pattern in _TOKEN_PATTERNS:
            text, count = pattern.subn("", text)
            if count:
                self._note(label)
        return text
