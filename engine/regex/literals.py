"""Literal text every match of a JavaScript pattern must contain: a cheap test that lets a run skip
texts the pattern cannot match (`(.*?</think>)` costs O(n²) on a text without `</think>`).

The analysis is conservative: when unsure, a piece of the pattern requires nothing, so the answer
can only be weaker (fewer texts skipped), never wrong. `required_literals` returns requirements — for
each, a match contains at least one of its literals — or None when nothing useful is known.
"""

from __future__ import annotations

import re

MIN_LITERAL = 3
_QUANTIFIER_CHARS = "*+?{"
_CLASS_ESCAPES = set("dDwWsSbBpPkcxu0123456789")


# An alternative that opens (after group openings) with an unbounded wildcard such as `.*?`,
# `[\s\S]*` or `\w+`: its search tries every start against the rest of the text.
_LEADING_WILDCARD = re.compile(
    r"(?:\((?:\?:|\?<[A-Za-z_$][\w$]*>)?)*(?:\.|\[(?:\\.|[^\]\\])*\]|\\[sSwWdD])(?:[*+]|\{\d+,\})"
)


def leads_with_wildcard(pattern: str) -> bool:
    """Whether a top-level alternative starts with an unbounded wildcard (a hint for speed only)."""
    return any(_LEADING_WILDCARD.match(alternative) for alternative in _top_level_alternatives(pattern))


def _top_level_alternatives(pattern: str) -> list[str]:
    parts, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    # An alternative inside one outer group counts too: `(.*?</x>)|(<x>…)`.
    return [p[1:] if p.startswith("(") and not p.startswith("(?") else p for p in parts]


def literal_prefix(pattern: str, flags: str) -> str:
    """The literal text every match starts with ("" when unknown or case-insensitive)."""
    if "i" in flags or len(_top_level_alternatives(pattern)) != 1:
        return ""
    parser = _Parser(pattern, ascii_only=False)
    prefix = ""
    try:
        while parser.pos < len(pattern) and pattern[parser.pos] not in "|)(":
            char, _ = parser.atom()
            if char is None:
                break
            optional, repeats = parser.quantifier()
            if optional:
                break
            prefix += char
            if repeats:
                break
    except (_Unsupported, IndexError, ValueError):
        return ""
    return prefix if len(prefix) >= 2 else ""


class _Unsupported(Exception):
    pass


Requirement = tuple[str, ...]  # a match contains at least one of these literals
MAX_REQUIREMENTS = 4


def required_literals(pattern: str, flags: str) -> tuple[Requirement, ...] | None:
    """Requirements every match meets (each: one of its literals is in the text), or None."""
    try:
        parser = _Parser(pattern, ascii_only="i" in flags)
        found = parser.alternation()
        if parser.pos != len(pattern):
            return None
    except (_Unsupported, IndexError, ValueError):
        return None
    if not found:
        return None
    best = sorted({tuple(sorted(set(r))) for r in found}, key=_strength, reverse=True)
    return tuple(best[:MAX_REQUIREMENTS])


def _useful(requirement: Requirement) -> bool:
    # A short ASCII literal is in nearly every text: not worth testing.
    return bool(requirement) and all(len(lit) >= MIN_LITERAL or not lit.isascii() for lit in requirement)


def _strength(requirement: Requirement) -> tuple[int, int]:
    return min(len(lit) for lit in requirement), -len(requirement)


class _Parser:
    def __init__(self, pattern: str, *, ascii_only: bool) -> None:
        self.src = pattern
        self.pos = 0
        # Case-insensitive matching of non-ASCII letters has engine-specific rules: leave them out.
        self.ascii_only = ascii_only

    def alternation(self) -> list[Requirement]:
        """All of the returned requirements hold for every match of the alternation."""
        options = [self.sequence()]
        while self.pos < len(self.src) and self.src[self.pos] == "|":
            self.pos += 1
            options.append(self.sequence())
        if len(options) == 1:
            return options[0]
        if any(not option for option in options):
            return []
        union = tuple(lit for option in options for lit in max(option, key=_strength))
        return [union] if _useful(union) else []

    def sequence(self) -> list[Requirement]:
        """Every requirement of the mandatory pieces of a sequence (all of them hold)."""
        found: list[Requirement] = []
        run = ""
        while self.pos < len(self.src) and self.src[self.pos] not in "|)":
            char, group = self.atom()
            optional, repeats = self.quantifier()
            if char is not None and not optional:
                run += char
                if repeats:  # `ab+` still contains "ab", but what follows is not adjacent
                    found.append((run,))
                    run = ""
                continue
            if run:
                found.append((run,))
                run = ""
            if group and not optional:
                found.extend(group)
        if run:
            found.append((run,))
        return [requirement for requirement in found if _useful(requirement)]

    def atom(self) -> tuple[str | None, list[Requirement] | None]:
        """(a literal character, or a group's requirement); both None for anything else."""
        char = self.src[self.pos]
        self.pos += 1
        if char == "\\":
            return self.escape(), None
        if char == "[":
            self.skip_class()
            return None, None
        if char == "(":
            return None, self.group()
        if char in ".^$":
            return None, None
        if char in "*+?":
            raise _Unsupported  # a quantifier with nothing before it: let the engine judge
        if char == "{" and self.looks_like_quantifier(self.pos - 1):
            raise _Unsupported
        return self.literal(char), None

    def literal(self, char: str) -> str | None:
        if self.ascii_only and not char.isascii():
            return None
        return char

    def escape(self) -> str | None:
        char = self.src[self.pos]
        self.pos += 1
        if char in _CLASS_ESCAPES or char.isalnum():
            if char == "k" and self.pos < len(self.src) and self.src[self.pos] == "<":
                self.pos = self.src.index(">", self.pos) + 1
            elif char in "pP" and self.pos < len(self.src) and self.src[self.pos] == "{":
                self.pos = self.src.index("}", self.pos) + 1
            elif char == "x":
                self.pos += 2
            elif char == "u":
                if self.pos < len(self.src) and self.src[self.pos] == "{":
                    self.pos = self.src.index("}", self.pos) + 1
                else:
                    self.pos += 4
            elif char == "c":
                self.pos += 1
            return None
        return self.literal(char)

    def skip_class(self) -> None:
        while self.src[self.pos] != "]":
            self.pos += 2 if self.src[self.pos] == "\\" else 1
        self.pos += 1

    def group(self) -> list[Requirement] | None:
        lookaround = False
        if self.src.startswith("?:", self.pos):
            self.pos += 2
        elif self.src.startswith(("?=", "?!"), self.pos):
            self.pos += 2
            lookaround = True
        elif self.src.startswith(("?<=", "?<!"), self.pos):
            self.pos += 3
            lookaround = True
        elif self.src.startswith("?<", self.pos):
            self.pos = self.src.index(">", self.pos) + 1
        elif self.src.startswith("?", self.pos):
            raise _Unsupported  # modifiers such as (?i:…): let the engine judge
        inner = self.alternation()
        if self.src[self.pos] != ")":
            raise _Unsupported
        self.pos += 1
        return None if lookaround else inner

    def quantifier(self) -> tuple[bool, bool]:
        """(the atom may be absent, the atom may repeat)."""
        if self.pos >= len(self.src):
            return False, False
        char = self.src[self.pos]
        if char in "*?":
            self.pos += 1
            self.lazy()
            return True, char == "*"
        if char == "+":
            self.pos += 1
            self.lazy()
            return False, True
        if char == "{" and self.looks_like_quantifier(self.pos):
            close = self.src.index("}", self.pos)
            low, _, high = self.src[self.pos + 1 : close].partition(",")
            self.pos = close + 1
            self.lazy()
            return int(low) == 0, high != low or "," in self.src[self.pos - 1 - len(high) - 1 : self.pos]
        return False, False

    def lazy(self) -> None:
        if self.pos < len(self.src) and self.src[self.pos] == "?":
            self.pos += 1

    def looks_like_quantifier(self, at: int) -> bool:
        close = self.src.find("}", at)
        if close < 0:
            return False
        body = self.src[at + 1 : close]
        low, comma, high = body.partition(",")
        return low.isdigit() and (not comma or high == "" or high.isdigit())
